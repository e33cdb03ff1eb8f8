"""Pushes N generated skills (about 1.4 KB of body each) to a node or hub
replica in pushes of 500: the data SIZING.md's figures were measured on.
Usage: load.py URL N   (the node's per-origin and per-sender limits off)
"""
import hashlib, json, random, sys, time, urllib.request
url, n, batch = sys.argv[1], int(sys.argv[2]), 500
random.seed(7)
words = "the a build test deploy debug git cargo rust python shell check verify run step when use error fix log trace".split()
def packet(i):
    name = f"sizing-skill-{i:07d}"
    desc = f"Sizing skill {i} for " + " ".join(random.choice(words) for _ in range(8))
    steps = "\n".join(f"{k}. " + " ".join(random.choice(words) for _ in range(14)) + "." for k in range(1, 16))
    body = f"---\nname: {name}\ndescription: {desc}\n---\n# {name}\n\n## When to Use\n{desc}.\n\n## Steps\n{steps}\n\n## Verification\nThe result is checked.\n"
    h = hashlib.sha256(body.encode()).hexdigest()
    return {"id": h[:16], "version": "1.0", "createdAt": "2026-11-20T10:00:00Z", "originInstance": f"origin-{i % 50}",
            "skillName": name, "skillDescription": desc, "skillBody": body, "confidence": 0.9, "integrityHash": h,
            "shareable": True, "tags": [random.choice(words), random.choice(words)], "deprecated": False}
total_body = 0
t0 = time.time()
for start in range(0, n, batch):
    pk = [packet(i) for i in range(start, min(n, start + batch))]
    total_body += sum(len(p["skillBody"].encode()) for p in pk)
    upd = {"id": f"load-{start}", "peerInstance": "sizing-loader", "generatedAt": "2026-11-20T10:00:05Z", "skills": pk, "sequenceNum": start}
    req = urllib.request.Request(url + "/ecp/skills", data=json.dumps(upd).encode(), headers={"content-type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=120))
    assert r["newSkills"] == len(pk), str(r)[:300]
print(f"pushed {n} skills, {total_body} body bytes, {time.time()-t0:.1f} s")
