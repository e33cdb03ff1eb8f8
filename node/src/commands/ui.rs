//! `ecp-node ui`: prints a link that logs a browser in to the status page
//! of the server running on the data folder — once, within ten minutes —
//! as notebook servers do. The link is signed with the API token, so only
//! a user who can read the data folder can make one.

use std::process::ExitCode;

use anyhow::Context as _;
use ecp_node::config::Flags;
use ecp_node::data_lock;
use ecp_node::http::status_page;

use crate::cli::GlobalArgs;

pub(crate) fn run(global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let Some(info) = data_lock::running_server(&config.data_dir) else {
        anyhow::bail!(
            "no server runs on this data folder: start one with `ecp-node serve` (with the same --data), then run \
             `ecp-node ui` again"
        );
    };
    let token = ecp_node::api_token::read(&config.data_dir)
        .context("cannot read the API token of the data folder (run this as the user who runs the node)")?
        .with_context(|| {
            format!("the data folder holds no {}; restart the server", ecp_node::api_token::TOKEN_FILE)
        })?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    println!("{}", status_page::login_link(&info.url, &token, now));
    eprintln!(
        "ecp-node: open this link in a browser on this machine: it logs in to the status page once, within {} \
         minutes",
        status_page::access::TICKET_SECONDS / 60
    );
    Ok(ExitCode::SUCCESS)
}
