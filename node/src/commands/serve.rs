//! `ecp-node serve`.

use std::process::ExitCode;

use ecp_node::Node;
use ecp_node::config::Overrides;
use ecp_node::tls::TlsFiles;

use crate::cli::{GlobalArgs, ServeArgs};

pub(crate) fn run(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, overrides(args))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let skills_dir = config.skills_dir.clone();
        let keys = config.own_keys().len();
        let auth = match (keys, config.accept_legacy && config.secret.is_some()) {
            (0, _) => "open unless peers have keys (no secret, no [[key]])".to_owned(),
            (n, true) => format!("signed requests required ({n} own keys), X-ECP-HMAC accepted"),
            (n, false) => format!("signed requests required ({n} own keys), X-ECP-HMAC refused"),
        };
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
        node.run_until(ecp_node::node::shutdown_signal()).await?;
        tracing::info!("ecp-node stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// What serve's flags (and their environment variables) set: `health`
/// reads them too, to find the node the way it was started.
pub(crate) fn overrides(args: ServeArgs) -> Overrides {
    Overrides {
        listen: args.listen,
        health_listen: args.health_listen,
        secret: args.secret,
        secret_file: args.secret_file,
        max_body_bytes: args.max_body_bytes,
        max_packets: args.max_packets,
        body_bytes_in_flight: args.body_bytes_in_flight,
        mdns: args.no_mdns.then_some(false),
        origin_limit_hour: args.origin_limit_hour,
        origin_limit_day: args.origin_limit_day,
        sender_limit_hour: args.sender_limit_hour,
        sender_limit_day: args.sender_limit_day,
        quarantine_entries: args.quarantine_entries,
        quarantine_bytes: args.quarantine_bytes,
        quarantine_body_bytes: args.quarantine_body_bytes,
        history_depth: args.history_depth,
        client_rate_limit: args.client_rate_limit,
        client_burst: args.client_burst,
        max_connections: args.max_connections,
        max_connections_per_address: args.max_connections_per_address,
        max_bulk_delete: args.max_bulk_delete,
        max_bulk_delete_fraction: args.max_bulk_delete_fraction,
        tls: TlsFiles {
            cert: args.tls_cert,
            key: args.tls_key,
            client_ca: args.client_ca,
            ..TlsFiles::default()
        },
        accept_legacy: args.accept_legacy,
        names: (!args.names.is_empty()).then_some(args.names),
        trust_loopback: args.trust_loopback.then_some(true),
        ..Overrides::default()
    }
}
