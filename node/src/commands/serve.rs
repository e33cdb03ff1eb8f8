//! `ecp-node serve`.

use std::process::ExitCode;

use ecp_node::Node;

use super::output::counted;
use crate::cli::{GlobalArgs, ServeArgs};

pub(crate) fn run(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, args.flags())?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let skills_dir = config.skills_dir.clone();
        let keys = config.own_keys().len();
        let auth = match (keys, config.accept_legacy && config.secret.is_some()) {
            (0, _) => "open unless peers have keys (no secret, no [[key]])".to_owned(),
            (n, true) => format!("signed requests required ({}), X-ECP-HMAC accepted", counted(n, "own key")),
            (n, false) => format!("signed requests required ({}), X-ECP-HMAC refused", counted(n, "own key")),
        };
        // Before bind: a signal as soon as server.json appears must find its handler.
        let stop = ecp_node::node::shutdown_signal();
        if config.store.is_some() {
            return serve_hub(config, auth, stop).await;
        }
        let node = Node::bind(config).await?;
        tracing::info!(
            transport = node.transport(),
            instance = node.library().store().instance_id(),
            skills_dir = %skills_dir.display(),
            %auth,
            peers = node.federator().peers_config().peers.len(),
            "ecp-node listening on {}",
            node.url()
        );
        if let Some(addr) = node.health_addr() {
            tracing::info!("health endpoints (/livez, /readyz) also on http://{addr}");
        }
        node.run_until(stop).await?;
        tracing::info!("ecp-node stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// `serve --store postgres://…`: a hub replica (#18 item 5).
async fn serve_hub(
    config: ecp_node::config::Config,
    auth: String,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<ExitCode> {
    let hub = ecp_node::hub::HubNode::bind(config).await?;
    tracing::info!(
        instance = hub.store().instance_id(),
        %auth,
        "ecp-node hub replica listening on {}, serving from PostgreSQL",
        hub.url()
    );
    hub.run_until(stop).await?;
    tracing::info!("ecp-node hub replica stopped");
    Ok(ExitCode::SUCCESS)
}
