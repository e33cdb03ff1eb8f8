//! The `ecp-node` binary (issue 3 — the server is not built yet).

fn main() {
    eprintln!(
        "ecp-node: the server is not implemented yet (protocol {}); see README.md",
        ecp_node::PROTOCOL_VERSION
    );
    std::process::exit(2);
}
