"""Pushes N generated bundles to a hub replica (or a node): each a SKILL.md
of about 1.5 KB (as load.py's), a script of about 1.9 KB and a reference of
about 4 KB of its own, and one license file every bundle shares (held
once). Blobs are uploaded first (PUT /ecp/blobs/{sha256}), then the
packets pushed 100 at a time: the data SIZING.md's bundle figures were
measured on.
Usage: bundles.py URL N   (the node's per-origin and per-sender limits off)
"""
import hashlib, json, random, sys, time, urllib.request
url, n, batch = sys.argv[1], int(sys.argv[2]), 100
random.seed(11)
words = "the a build test deploy debug git cargo rust python shell check verify run step when use error fix log trace".split()
license_text = ("Permission is granted to use, copy and change this skill, provided this notice is kept.\n" * 12).encode()


def sentence(k):
    return " ".join(random.choice(words) for _ in range(k))


def sha(b):
    return hashlib.sha256(b).hexdigest()


def put(b):
    req = urllib.request.Request(f"{url}/ecp/blobs/{sha(b)}", data=b, method="PUT")
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status in (200, 201), r.status


def packet(i):
    name = f"bundle-skill-{i:07d}"
    desc = f"Bundle skill {i} for " + sentence(8)
    steps = "\n".join(f"{k}. " + sentence(14) + "." for k in range(1, 16))
    body = (f"---\nname: {name}\ndescription: {desc}\n---\n# {name}\n\n## When to Use\n{desc}.\n\n## Steps\n"
            f"{steps}\n\nRun scripts/run.py and read references/guide.md.\n\n## Verification\nThe result is checked.\n")
    script = ("#!/usr/bin/env python3\n\"\"\"" + sentence(10) + "\"\"\"\nimport sys\n\n"
              + "".join(f"def step_{k}():\n    print({sentence(6)!r})\n\n" for k in range(30))).encode()
    guide = ("# Guide\n\n" + "".join(f"## Part {k}\n\n{sentence(20)}.\n{sentence(20)}.\n\n" for k in range(18))).encode()
    files = [("SKILL.md", body.encode()), ("scripts/run.py", script), ("references/guide.md", guide),
             ("LICENSE.txt", license_text)]
    listing = sorted(({"path": p, "size": len(b), "mode": "0644", "sha256": sha(b)} for p, b in files),
                     key=lambda f: f["path"].encode())
    canonical = "".join(f"{f['sha256']} {f['mode']} {f['size']} {f['path']}\n" for f in listing)
    h = sha(body.encode())
    p = {"id": h[:16], "version": "1.0", "createdAt": "2026-11-20T10:00:00Z", "originInstance": f"origin-{i % 50}",
         "skillName": name, "skillDescription": desc, "skillBody": body, "confidence": 0.9, "integrityHash": h,
         "shareable": True, "tags": [random.choice(words), random.choice(words)], "deprecated": False,
         "files": listing, "bundleDigest": "sha256:" + sha(canonical.encode())}
    return p, [b for path, b in files if path != "SKILL.md"]


total = {"body": 0, "files": 0}
t0 = time.time()
put(license_text)
for start in range(0, n, batch):
    made = [packet(i) for i in range(start, min(n, start + batch))]
    for _, blobs in made:
        for b in blobs[:2]:
            put(b)
            total["files"] += len(b)
    pk = [p for p, _ in made]
    total["body"] += sum(len(p["skillBody"].encode()) for p in pk)
    upd = {"id": f"bundles-{start}", "peerInstance": "sizing-loader", "generatedAt": "2026-11-20T10:00:05Z",
           "skills": pk, "sequenceNum": start}
    req = urllib.request.Request(url + "/ecp/skills", data=json.dumps(upd).encode(),
                                 headers={"content-type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=300))
    assert r["newSkills"] == len(pk), str(r)[:600]
print(f"pushed {n} bundles: {total['body']} body bytes, {total['files']} bytes of files of their own "
      f"(+{len(license_text)} shared), {time.time() - t0:.1f} s")
