#!/usr/bin/env python3
"""Makes revocations.json (SPEC.md §14) independently of the Rust crate:
Ed25519 from the `cryptography` package, canonical forms and verification
outcomes written out from the spec's text. Key ids come from
generate_origin_signatures.py (the same §13.2 rule).

Run from anywhere: python3 protocol/testdata/vectors/generate_revocations.py
"""

import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_origin_signatures import SEED_A, SEED_B, key_id, public_of  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

TAG = "ecp-revocation-v1"


def canonical(rev: dict, instance: str) -> str:
    return (
        f"{TAG}\ninstance:{instance}\nname:{rev['skillName']}\ndigest:{rev['digest']}\n"
        f"revokedAt:{rev['revokedAt']}\nreason:{rev['reason']}\n"
    )


def sign(seed: bytes, rev: dict, instance: str) -> dict:
    public = public_of(seed)
    sig = Ed25519PrivateKey.from_private_bytes(seed).sign(canonical(rev, instance).encode())
    return {"instance": instance, "keyId": key_id(public), "publicKey": public.hex(), "sig": sig.hex()}


def revocation(name: str, digest: str, at: str, reason: str) -> dict:
    return {"skillName": name, "digest": digest, "reason": reason, "revokedAt": at}


def main() -> None:
    cases = []
    plain = revocation("bisect", "5" * 64, "2026-11-26T08:00:00Z", "leaks the deploy token")
    bundle = revocation("bundled", "sha256:" + "ab" * 32, "2026-11-26T08:00:00.25Z",
                        "ships a script that deletes ~/.ssh — use version 3")
    for what, r in [("plain skill", plain), ("bundle, fraction of a second, non-ASCII reason", bundle)]:
        cases.append({"description": f"canonical form, {what}", "kind": "canonical",
                      "input": {"revocation": r, "instance": "alice-laptop"},
                      "expected": {"canonical": canonical(r, "alice-laptop")}})
        cases.append({"description": f"signature, {what}", "kind": "sign",
                      "input": {"seed": SEED_A.hex(), "revocation": r, "instance": "alice-laptop"},
                      "expected": {"originSignature": sign(SEED_A, r, "alice-laptop")}})

    def verify_case(what: str, r: dict, error):
        cases.append({"description": f"verify: {what}", "kind": "verify", "input": {"revocation": r},
                      "expected": {"error": error}})

    good = dict(plain, originSignature=sign(SEED_A, plain, "alice-laptop"))
    verify_case("valid", good, None)
    verify_case("valid, bundle digest", dict(bundle, originSignature=sign(SEED_A, bundle, "alice-laptop")), None)
    a_id = key_id(public_of(SEED_A))
    verify_case("valid, key-id instance", dict(plain, originSignature=sign(SEED_A, plain, a_id)), None)
    verify_case("unsigned", plain, "unsigned")
    verify_case("another digest after signing", dict(good, digest="6" * 64), "mismatch")
    verify_case("another name after signing", dict(good, skillName="other"), "mismatch")
    verify_case("reason changed after signing", dict(good, reason="nothing to see"), "mismatch")
    verify_case("revokedAt changed after signing", dict(good, revokedAt="2026-11-26T08:00:01Z"), "mismatch")
    other = copy.deepcopy(good)
    other["originSignature"]["instance"] = "bob-desktop"
    verify_case("the signature's instance changed", other, "mismatch")
    forged = copy.deepcopy(good)
    forged["originSignature"]["keyId"] = key_id(public_of(SEED_B))
    verify_case("keyId of another key", forged, "keyIdMismatch")
    verify_case("a key-id instance claimed by another key",
                dict(plain, originSignature=sign(SEED_B, plain, a_id)), "notTheInstanceKey")
    verify_case("upper-case digest", dict(plain, digest="A" * 64,
                                          originSignature=sign(SEED_A, dict(plain, digest="A" * 64), "alice-laptop")),
                "badDigest")
    for what, reason in [("empty reason", ""), ("a reason of two lines", "one\ntwo"),
                         ("a reason of 513 bytes", "x" * 513)]:
        r = dict(plain, reason=reason)
        verify_case(what, dict(r, originSignature=sign(SEED_A, r, "alice-laptop")), "badReason")
    r = dict(plain, reason="x" * 512)
    verify_case("a reason of 512 bytes", dict(r, originSignature=sign(SEED_A, r, "alice-laptop")), None)
    r = dict(plain, skillName="../etc")
    verify_case("a name that is not a skill name", dict(r, originSignature=sign(SEED_A, r, "alice-laptop")),
                "badName")

    doc = {
        "description": "ECP/1.3 revocations (SPEC.md §14): canonical forms, signatures, verification outcomes. "
                       "Made by generate_revocations.py with the `cryptography` package.",
        "format": "kind canonical: revocation, instance -> canonical text; sign: seed, revocation, instance -> "
                  "originSignature (Ed25519 is deterministic); verify: revocation -> error null (holds) or one of "
                  "unsigned, mismatch, keyIdMismatch, notTheInstanceKey, badDigest, badReason, badName",
        "cases": cases,
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "revocations.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
