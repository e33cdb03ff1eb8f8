//! `ecp-node health`: asks the running node whether it is ready (or, with
//! `--live`, alive), for exec probes and scripts. It finds the node as
//! `serve` was started — the same flags, environment and node.toml — and
//! asks `health_listen` when set, else the listen address (a wildcard
//! address is asked on loopback). Over TLS it trusts exactly the node's own
//! certificate (`--tls-cert`) and presents the node's client certificate,
//! so it works under mTLS without a CA of its own.
//!
//! Exit status: 0 ready (alive), 1 not, or the node cannot be reached.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use ecp_node::config::Config;

use crate::cli::{GlobalArgs, HealthArgs};

/// How long the probe waits for the node: readiness itself waits up to 2 s for the store.
const TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn run(global: &GlobalArgs, args: HealthArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, args.serve.flags())?;
    let path = if args.live { "/livez" } else { "/readyz" };
    let url = probe_url(&config, path);
    let mut client = reqwest::Client::builder().no_proxy().timeout(TIMEOUT);
    if let (None, Some(cert)) = (config.health_listen, &config.tls.cert) {
        ecp_node::tls::install_default_provider();
        let tls = ecp_node::tls::own_node_client_config(cert, &config.tls)?;
        client = client.use_preconfigured_tls(tls);
    }
    let client = client.build().context("cannot build the HTTP client")?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer = runtime.block_on(async {
        let response = client.get(&url).send().await?;
        let status = response.status();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    });
    match answer {
        Ok((status, body)) => {
            println!("{}", body.trim_end());
            if status.is_success() {
                Ok(ExitCode::SUCCESS)
            } else {
                super::tell(format_args!("{url} answered {status}"));
                Ok(ExitCode::from(1))
            }
        }
        Err(e) => {
            super::tell(format_args!(
                "cannot reach the node at {url}: {}; is `ecp-node serve` running with these settings?",
                innermost(&e)
            ));
            Ok(ExitCode::from(1))
        }
    }
}

/// The innermost cause says what happened ("Connection refused"); reqwest's
/// own text repeats the URL.
fn innermost(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The URL of `path` on the address probes should ask.
fn probe_url(config: &Config, path: &str) -> String {
    let (addr, scheme) = match config.health_listen {
        Some(addr) => (addr, "http"),
        None => (config.listen, if config.tls.cert.is_some() { "https" } else { "http" }),
    };
    format!("{scheme}://{}{path}", ecp_node::node::reachable_locally(addr))
}
