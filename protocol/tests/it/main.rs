//! Integration tests of `ecp-protocol`, one binary (one link step).
//!
//! Modules:
// reference_fixtures: every fixture of the Go implementation decodes, round-trips and merges as specified.
mod reference_fixtures;
// legacy_hmac: X-ECP-HMAC against the vectors checked on the reference server.
mod legacy_hmac;
// merge_properties: proptest — merge never panics, counts add up, a repeated merge changes nothing.
mod merge_properties;
// spec_vectors: the crate against every test vector of SPEC.md (testdata/vectors/*.json).
mod spec_vectors;
// bundle_vectors: the bundle digest and content vectors of SPEC.md §12 (the merge ones are in spec_vectors).
mod bundle_vectors;
// origin_signatures: key ids, canonical forms and signatures of SPEC.md §13 against origin-signatures.json.
mod origin_signatures;
// revocations: canonical forms, signatures and verification of SPEC.md §14 against revocations.json.
mod revocations;
// proposals: proposal ids and the hop's checks of SPEC.md §17 against proposals.json.
mod proposals;
// bundle_scan: the bundle scan against bundle-scan.json, and a clean generated 5 MB folder.
mod bundle_scan;
// generated_bundle: a clean skill folder of a given size (also the scan bench's).
mod generated_bundle;
// scan_corpus: recall and false-positive rate of the safety scanner on the labeled corpus.
mod scan_corpus;
// fuzz_regressions: inputs kept from cargo-fuzz replayed through the fuzz targets' checks (fuzz/src/lib.rs).
mod fuzz_regressions;
