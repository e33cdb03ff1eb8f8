#!/usr/bin/env python3
"""A run "after" read as the run "as found" too, per file.

New tests added as their own test functions leave the old ones as they
were, and cargo-mutants keeps each mutant's test log: a mutant caught
after is caught as found when some test that is not new fails on it
(docs/mutation-testing.md › Whole-file sweeps of session 21's rule code).
A mutant whose log names no failing test (a crash, a timeout) is
"undecided"; so is one that only CHANGED tests (old tests given a new
assertion) catch: run those on the tree as found.

    python3 .cargo/mutants_as_found.py mutants.out 'edge_tests::|::new_test_name' ['changed_test']
"""
import json
import re
import sys
from collections import Counter, defaultdict


def main() -> None:
    out, new = sys.argv[1], re.compile(sys.argv[2])
    changed = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    outcomes = json.load(open(f"{out}/outcomes.json"))["outcomes"]
    per: dict[str, Counter] = defaultdict(Counter)
    notes = []
    for o in outcomes:
        scenario = o["scenario"]
        if not isinstance(scenario, dict) or "Mutant" not in scenario:
            continue  # the baseline
        m = scenario["Mutant"]
        c = per[m["file"]]
        if o["summary"] == "Unviable":
            c["unviable"] += 1
            continue
        c["viable"] += 1
        if o["summary"] == "MissedMutant":
            notes.append(f"missed        {m['name']}")
            continue
        c["after"] += 1
        log = open(f"{out}/{o['log_path']}", errors="replace").read()
        failed = set(re.findall(r"^test (\S+) \.\.\. FAILED", log, re.M))
        old = [t for t in failed if not new.search(t) and not (changed and changed.search(t))]
        if o["summary"] == "Timeout" or not failed:
            c["undecided"] += 1
            notes.append(f"undecided     {m['name']}")
        elif old:
            c["as found"] += 1
        elif all(new.search(t) for t in failed):
            notes.append(f"new tests     {m['name']}")
        else:
            c["undecided"] += 1
            notes.append(f"changed tests {m['name']}: {sorted(failed)}")
    for f, c in sorted(per.items()):
        print(
            f"{f}: as found {c['as found']}/{c['viable']} (+{c['undecided']} undecided), "
            f"after {c['after']}/{c['viable']}, {c['unviable']} unviable"
        )
    print("\n".join(notes))


if __name__ == "__main__":
    main()
