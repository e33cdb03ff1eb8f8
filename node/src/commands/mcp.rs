//! `ecp-node mcp`: the MCP server ([`ecp_node::mcp`]) on standard input and
//! output, the command an agent's harness starts. It reads the data
//! folder's store, beside a running server too (as `skill search` does:
//! SQLite lets several processes read it); an outcome report, the one
//! write, goes to the server running on the data folder through its `/v1/`
//! API when one runs, so that its limits and retirement apply and its
//! skills folder follows, and into the store itself when none runs.
//! Standard output carries only MCP messages; the log goes to standard error.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use ecp_node::config::Flags;
use ecp_node::mcp::{LocalReports, Reporter, SkillServer, ToolError};
use ecp_node::outcomes::{ReportBody, Reported};
use rmcp::ServiceExt as _;

use super::api::Server;
use crate::cli::GlobalArgs;

/// Reports sent to the server running on the data folder.
struct ServerReports(Arc<Server>);

impl Reporter for ServerReports {
    fn report(&self, name: &str, body: ReportBody) -> Result<Reported, ToolError> {
        match self.0.report_outcome(name, &body) {
            Ok(Ok(reported)) => Ok(reported),
            Ok(Err(refusal)) if refusal.code == "no_such_skill" => {
                Err(ToolError::NoSuchSkill(name.to_owned()))
            }
            Ok(Err(refusal)) if refusal.status < 500 => {
                Err(ToolError::invalid("outcome_refused", refusal.message))
            }
            Ok(Err(refusal)) => Err(ToolError::internal(&refusal)),
            Err(e) => Err(ToolError::internal(&format_args!("{e:#}"))),
        }
    }
}

/// Serves until the client closes standard input.
pub(crate) fn run(global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    // Held here, so that the server handle (and the runtime of its client)
    // is dropped after the MCP runtime, outside it.
    let running = super::api::running(&config)?.map(Arc::new);
    let reporter: Arc<dyn Reporter> = match &running {
        Some(server) => Arc::new(ServerReports(server.clone())),
        None => Arc::new(LocalReports::new(library.clone(), config.outcomes)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let served = runtime.block_on(async move {
        let service = SkillServer::new(library, reporter)
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client's first messages were not an MCP session's start")?;
        service.waiting().await.context("the MCP session failed")?;
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(running);
    served?;
    Ok(ExitCode::SUCCESS)
}
