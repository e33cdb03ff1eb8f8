#!/usr/bin/env python3
"""Seeded random sample of the scanner's rule-file mutants, per folder.

Reads `cargo mutants --list` on stdin, draws ceil(n / DIVISOR) mutants of
each group with a fixed seed, and prints one `--re` regex that selects
exactly them (docs/mutation-testing.md › The scanner's rule files). The same list,
seed and divisor give the same sample, so a run "after" measures the same
mutants as the run "before". The speed-only engines (`engine/`,
`literals.rs`) and the classifier are left out of the groups.

    cargo mutants -p ecp-protocol --list --file 'protocol/src/scan/**/*.rs' \
      --file 'protocol/src/scan/*.rs' | python3 .cargo/mutants_sample.py 40 27

A third argument draws left-out folders too (`classifier/`: since session
26 its score refuses beside a rule's finding), each as a group of its own
and after the others, so the groups' draw stays what it was without it:

    ... | python3 .cargo/mutants_sample.py 40 32 classifier/
"""
import math
import random
import re
import sys
from collections import defaultdict

SCAN = "protocol/src/scan/"
LEFT_OUT = ("engine/", "literals.rs", "classifier/")


def group(path, also=()):
    rest = path[len(SCAN):]
    if rest.startswith(also):
        return "also " + rest.split("/")[0] + "/"
    if rest.startswith(LEFT_OUT):
        return None
    if "/" in rest:
        return rest.split("/")[0] + "/"
    if rest in ("exfil.rs", "context.rs"):
        return rest
    return "top-level"


def main():
    divisor, seed = int(sys.argv[1]), int(sys.argv[2])
    also = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else ()
    groups = defaultdict(list)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith(SCAN):
            name = group(line.split(":")[0], also)
            if name:
                groups[name].append(line)
    rng = random.Random(seed)
    picked = []
    # "also …" sorts after every folder and file name: drawn last.
    for name in sorted(groups, key=lambda g: (g.startswith("also "), g)):
        lines = groups[name]
        draw = rng.sample(lines, math.ceil(len(lines) / divisor))
        print(f"{name}: {len(draw)} of {len(lines)}", file=sys.stderr)
        picked += draw
    print("^(" + "|".join(re.escape(p) for p in sorted(picked)) + ")$")


if __name__ == "__main__":
    main()
