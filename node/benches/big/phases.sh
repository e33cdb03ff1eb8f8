#!/bin/bash
# The memory of a big node by phase (#18 item 3), on a copy of a loaded data
# folder, so that a change is measured without loading 100,000 skills again:
#
#   node/benches/big/phases.sh BIN LOADED WORK [VAR=VALUE ...]
#
# BIN: an `ecp-node` binary; LOADED: a data folder holding the skills (a copy
# of the big bench's, taken while it runs); WORK: where the copy goes (on
# tmpfs: /dev/shm/…), removed after; VAR=VALUE: set for the node (say
# MALLOC_ARENA_MAX=1). Prints VmHWM and VmRSS (MB) when the node first answers,
# after one full listing, after the manifest, after 16 `curl` readers for
# 10 s (the big bench's five reads, each reader keeping its order), and after
# a new skill lands in the skills folder and 16 full listings at once.
# 127.0.0.1 only.
set -euo pipefail
BIN=$1 LOADED=$2 WORK=$3
shift 3
rm -rf "$WORK"
mkdir -p "$WORK"
cp -a "$LOADED" "$WORK/data"
rm -f "$WORK/data/server.json" "$WORK/data/server.lock"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
A=127.0.0.1:$PORT
U=http://$A/ecp
env "$@" RUST_LOG=warn ECP_ORIGIN_LIMIT_HOUR=0 ECP_ORIGIN_LIMIT_DAY=0 ECP_SENDER_LIMIT_HOUR=0 \
  ECP_SENDER_LIMIT_DAY=0 ECP_CLIENT_RATE_LIMIT=0 ECP_POLICY_DEFAULT_TRUST=1 \
  "$BIN" --data "$WORK/data" serve --listen "$A" --no-mdns 2>"$WORK/node.log" >/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$WORK"' EXIT
mem() {
  awk '/VmHWM|VmRSS/ { printf "%s %.1f  ", $1, $2 * 1.024 / 1000 }' "/proc/$PID/status"
  echo "[$1] load $(cut -d' ' -f1 /proc/loadavg)"
}
until curl -sf "http://$A/healthz" >/dev/null; do
  kill -0 $PID || { tail -3 "$WORK/node.log"; exit 1; }
  sleep 0.2
done
mem ready
curl -s "$U/skills" -o /dev/null
mem listing
curl -s "$U/manifest" -o /dev/null
mem manifest
reader() {
  local end=$((SECONDS + 10)) i=$1
  while [ $SECONDS -lt $end ]; do
    case $((i % 5)) in
      0) curl -s "$U/skills" -o /dev/null ;;
      1) curl -s --compressed "$U/skills" -o /dev/null ;;
      2) curl -s "$U/skills?since=1" -o /dev/null ;;
      3) curl -s "$U/skills?since=5000&limit=500" -o /dev/null ;;
      4) curl -s "$U/manifest" -o /dev/null ;;
    esac
    i=$((i + 1))
  done
}
readers=()
for i in $(seq 0 15); do reader "$i" & readers+=($!); done
wait "${readers[@]}"
mem readers
# A change without a client that would build the feed first: the watcher imports it.
name=phases-burst-$RANDOM
mkdir -p "$WORK/data/skills/$name"
printf -- '---\nname: %s\ndescription: A skill that moves the sequence number.\n---\n# %s\n\n## Steps\n1. Read it.\n' \
  "$name" "$name" >"$WORK/data/skills/$name/SKILL.md"
sleep 4
burst=()
for _ in $(seq 16); do curl -s "$U/skills" -o /dev/null & burst+=($!); done
wait "${burst[@]}"
mem burst
