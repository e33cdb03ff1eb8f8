//! The `ecp-conformance` binary: parse the flags, run, print, exit
//! (0 every MUST passed, 1 one failed, 2 the suite could not run).

use clap::Parser;

fn main() -> std::process::ExitCode {
    ecp_conformance::cli::main(ecp_conformance::cli::Cli::parse())
}
