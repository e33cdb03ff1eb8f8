#!/usr/bin/env python3
"""Seeded random sample of the scanner's rule-file mutants, per folder.

Reads `cargo mutants --list` on stdin, draws ceil(n / DIVISOR) mutants of
each group with a fixed seed, and prints one `--re` regex that selects
exactly them (docs/mutation-testing.md › The scanner's rule files). The same list,
seed and divisor give the same sample, so a run "after" measures the same
mutants as the run "before". The speed-only engines (`engine/`,
`literals.rs`) and the classifier (a model that never refuses) are left out.

    cargo mutants -p ecp-protocol --list --file 'protocol/src/scan/**/*.rs' \
      --file 'protocol/src/scan/*.rs' | python3 .cargo/mutants_sample.py 40 27
"""
import math
import random
import re
import sys
from collections import defaultdict

SCAN = "protocol/src/scan/"
LEFT_OUT = ("engine/", "literals.rs", "classifier/")


def group(path):
    rest = path[len(SCAN):]
    if rest.startswith(LEFT_OUT):
        return None
    if "/" in rest:
        return rest.split("/")[0] + "/"
    if rest in ("exfil.rs", "context.rs"):
        return rest
    return "top-level"


def main():
    divisor, seed = int(sys.argv[1]), int(sys.argv[2])
    groups = defaultdict(list)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith(SCAN):
            name = group(line.split(":")[0])
            if name:
                groups[name].append(line)
    rng = random.Random(seed)
    picked = []
    for name in sorted(groups):
        lines = groups[name]
        draw = rng.sample(lines, math.ceil(len(lines) / divisor))
        print(f"{name}: {len(draw)} of {len(lines)}", file=sys.stderr)
        picked += draw
    print("^(" + "|".join(re.escape(p) for p in sorted(picked)) + ")$")


if __name__ == "__main__":
    main()
