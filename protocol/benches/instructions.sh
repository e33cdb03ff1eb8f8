#!/bin/bash
# Instructions per typical body's scan, which the machine's load does not move
# (README, "third pass"): each binary of `examples/scan_typical.rs` runs under
# cachegrind with N=2000 bodies and with N=0; the difference / 2,000.
# usage: benches/instructions.sh BINARY...   (copy each binary aside first to compare builds)
set -eu
out=$(mktemp -d)
for b in "$@"; do
  for n in 0 2000; do
    N=$n valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/$(basename "$b").$n" "$b" \
      >/dev/null 2>"$out/$(basename "$b").$n.err" &
  done
done
wait
for b in "$@"; do
  k=$(basename "$b")
  a=$(grep "I *refs" "$out/$k.0.err" | tr -d ',' | awk '{print $NF}')
  c=$(grep "I *refs" "$out/$k.2000.err" | tr -d ',' | awk '{print $NF}')
  echo "$b: $(( (c - a) / 2000 )) instructions per scan"
done
rm -rf "$out"
