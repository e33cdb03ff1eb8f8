//! The `ecp-conformance` binary (issue 6 — the suite is not built yet).

fn main() {
    eprintln!(
        "ecp-conformance {}: the suite is not implemented yet; see README.md",
        ecp_conformance::SUITE_VERSION
    );
    std::process::exit(2);
}
