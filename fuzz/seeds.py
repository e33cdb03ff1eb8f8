#!/usr/bin/env python3
# fuzz/seeds.py — writes the seed corpus of every fuzz target into OUT/<target>/
# from the project's own test data, so no copy of it is kept in git:
#   update_merge: every `update` of the merge vectors, push1.json, skills.json
#                 (protocol/testdata and ../shared/fixtures/reference when present);
#   frontmatter, scanner: every skillBody of those updates (the scan corpus is
#                 passed to libFuzzer as a directory by run.sh);
#   bundle_listing: every packet of those updates that lists files, and every
#                 `files` of the bundle digest vectors.
# Usage: python3 fuzz/seeds.py OUT
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "protocol" / "testdata"
REFERENCE = ROOT.parent / "shared" / "fixtures" / "reference"


def write(out: Path, target: str, data: bytes) -> None:
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    # Named by content, as libFuzzer names its own: reruns do not duplicate.
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def updates():
    for vector in sorted((TESTDATA / "vectors").glob("merge-*.json")):
        for case in json.loads(vector.read_text())["cases"]:
            update = case.get("input", {}).get("update")
            if update is not None:
                yield update
    for folder in (TESTDATA, REFERENCE):
        for name in ("push1.json", "skills.json"):
            path = folder / name
            if path.is_file():
                yield json.loads(path.read_text())


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: seeds.py OUT")
    out = Path(sys.argv[1])
    for update in updates():
        write(out, "update_merge", json.dumps(update).encode())
        for packet in update.get("skills") or []:
            body = packet.get("skillBody")
            if isinstance(body, str) and body:
                write(out, "frontmatter", body.encode())
                write(out, "scanner", body.encode())
            if packet.get("files"):
                write(out, "bundle_listing", json.dumps(packet).encode())
    for case in json.loads((TESTDATA / "vectors" / "bundle-digest.json").read_text())["cases"]:
        write(out, "bundle_listing", json.dumps(case["input"]["files"]).encode())
    for target in ("update_merge", "frontmatter", "scanner", "bundle_listing"):
        print(f"seeds/{target}: {len(list((out / target).iterdir()))} files")


if __name__ == "__main__":
    main()
