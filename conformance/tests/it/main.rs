//! Integration tests of `ecp-conformance`: the suite run against real
//! `ecp-node`s and against deliberately broken targets, and the binary's
//! command line. Loopback only. One binary, one link step.
//!
//! Modules:
// util: TestNode (an ecp-node on 127.0.0.1:0), Proxy (a fault-injecting front for it), suite runners.
mod util;
// real_node: a fresh ecp-node passes every MUST of ecp-1.2, with and without a secret.
mod real_node;
// broken: each deliberately broken target makes the matching check IDs fail.
mod broken;
// gate: an in-process ECP/1.2 node (verifier checked against the SPEC vectors) with faults.
mod gate;
// signed: the SIGN checks against correct and broken gates; the whole suite with a key.
mod signed;
// reference: Go-like targets — times per request, the checks ECP/1.1 implies, the differences section.
mod reference;
// cleanup: --cleanup withdraws what a run created from a real node; --no-cleanup keeps it.
mod cleanup;
// cli: the binary — exit codes, --list, the JSON and JUnit shapes, --help.
mod cli;
