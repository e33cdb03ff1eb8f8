//! The server running on the CLI's data folder, reached through its local
//! `/v1/` API: one function per action. A write command sends its change
//! here when a server holds the folder ([`ecp_node::data_lock`]), so the
//! server's folders and policy apply and its next answer shows the change;
//! without one the command works on the store itself.
//!
//! Only a plain-HTTP server on a loopback URL is talked to (the address
//! comes from `server.json`, which anyone who can write the data folder
//! could edit: the token must not go anywhere else). A server on another
//! address, or serving HTTPS, is left alone: the command works on the store
//! and the server picks the change up within its polling interval.
//!
//! Adding an action is one method calling [`Server::call`] with its method,
//! path and body, returning the JSON answer's type.

use anyhow::Context as _;
use ecp_node::config::{Config, Secret};
use ecp_node::data_lock::{self, ServerInfo};
use ecp_node::federation::PeerView;
use ecp_node::operator::{Added, Approved, Dropped, Removed};
use ecp_node::outcomes::{ReportBody, Reported, Restored};
use ecp_node::sharing::Decision;
use ecp_node::store::Verdict;
use ecp_node::versions::Done;
use ecp_protocol::bundle::MAX_BLOBS_PER_QUERY;
use ecp_protocol::wire::{BundleFile, MissingBlobs};
use reqwest::{Method, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::output::tell;

/// How long one call may take (an add re-projects; a server under load is slow).
const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The answer of `POST /v1/quarantine/drop`.
#[derive(Deserialize)]
struct DroppedMany {
    dropped: Vec<Dropped>,
}

/// The answer of `POST /v1/inbox/{id}/accept|reject`, as far as the CLI reads it.
#[derive(Deserialize)]
struct Decided {
    entry: DecidedEntry,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DecidedEntry {
    skill_name: String,
}

/// A server's refusal: its status, error code and message.
#[derive(Debug, thiserror::Error)]
#[error("the server running on this data folder refused: {message} ({code}, HTTP {status})")]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) code: String,
    pub(crate) message: String,
}

/// The running server, with what it takes to call it.
pub(crate) struct Server {
    info: ServerInfo,
    base: Url,
    token: Secret,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

/// The server holding `config`'s data folder, if one does and it can be
/// called (see the module docs for the ones that cannot: a note says so).
pub(crate) fn running(config: &Config) -> anyhow::Result<Option<Server>> {
    let Some(info) = data_lock::running_server(&config.data_dir) else { return Ok(None) };
    let Some(base) = loopback_http(&info.url) else {
        tell(format_args!(
            "ecp-node: note: a server (pid {}) runs on this data folder at {}; the CLI talks only to plain HTTP on \
             loopback, so it works on the store directly and the server shows the change within its polling \
             interval",
            info.pid, info.url
        ));
        return Ok(None);
    };
    let token = ecp_node::api_token::read(&config.data_dir)
        .with_context(|| format!("a server (pid {}) runs on this data folder", info.pid))?
        .with_context(|| {
            format!(
                "a server (pid {}) runs on this data folder but it holds no {}; restart the server",
                info.pid,
                ecp_node::api_token::TOKEN_FILE
            )
        })?;
    // No proxy: the request stays on this machine (and a proxy would add
    // X-Forwarded-For, which the server takes for a stranger).
    let client = reqwest::Client::builder().no_proxy().timeout(CALL_TIMEOUT).build()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(Some(Server { info, base, token, client, runtime }))
}

/// `url` if it is `http://` on 127.0.0.1, ::1 or localhost.
fn loopback_http(url: &str) -> Option<Url> {
    let url = Url::parse(url).ok()?;
    let host = url.host_str()?;
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let loopback = bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    (url.scheme() == "http" && loopback && url.username().is_empty() && url.password().is_none())
        .then_some(url)
}

impl Server {
    /// What `server.json` says about it.
    pub(crate) fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// `POST /v1/skills`: the SKILL.md `text` and, for a skill folder, the
    /// listing of its other `files`, each uploaded first ([`Server::upload`]).
    pub(crate) fn add_skill(
        &self,
        text: &str,
        folder: Option<&str>,
        files: &[BundleFile],
    ) -> anyhow::Result<Result<Added, Refusal>> {
        let body = json!({ "text": text, "folder": folder, "files": files });
        self.call(Method::POST, &["v1", "skills"], Some(body))
    }

    /// Uploads the `files` (digest and bytes) the server does not hold yet:
    /// `POST /v1/blobs/missing` asks which, `PUT /v1/blobs/{sha256}` sends
    /// each of those once.
    pub(crate) fn upload(&self, files: &[(&str, &[u8])]) -> anyhow::Result<Result<(), Refusal>> {
        let digests: Vec<&str> = files.iter().map(|(sha256, _)| *sha256).collect();
        for asked in digests.chunks(MAX_BLOBS_PER_QUERY) {
            let answer: Result<MissingBlobs, Refusal> =
                self.call(Method::POST, &["v1", "blobs", "missing"], Some(json!({ "blobs": asked })))?;
            let missing = match answer {
                Ok(answer) => answer.missing,
                Err(refusal) => return Ok(Err(refusal)),
            };
            for sha256 in &missing {
                let Some((_, bytes)) = files.iter().find(|(digest, _)| digest == sha256) else {
                    anyhow::bail!("the server asked for a blob {sha256} this CLI did not offer");
                };
                let request = self.request(Method::PUT, &["v1", "blobs", sha256])?.body(bytes.to_vec());
                let _stored: Value = match self.send(request, format!("PUT v1/blobs/{sha256}"))? {
                    Ok(stored) => stored,
                    Err(refusal) => return Ok(Err(refusal)),
                };
            }
        }
        Ok(Ok(()))
    }

    /// `DELETE /v1/skills/{name}`.
    pub(crate) fn remove_skill(&self, name: &str) -> anyhow::Result<Result<Removed, Refusal>> {
        self.call(Method::DELETE, &["v1", "skills", name], None)
    }

    /// `POST /v1/quarantine/{id}/approve`.
    pub(crate) fn approve(&self, id: i64, force: bool) -> anyhow::Result<Result<Approved, Refusal>> {
        let body = json!({ "force": force });
        self.call(Method::POST, &["v1", "quarantine", &id.to_string(), "approve"], Some(body))
    }

    /// `POST /v1/quarantine/drop`: every held entry, or those first received
    /// longer than `older_than` ago (a duration as `--older-than` takes it).
    pub(crate) fn drop_many(
        &self,
        older_than: Option<&str>,
    ) -> anyhow::Result<Result<Vec<Dropped>, Refusal>> {
        let body = match older_than {
            Some(age) => json!({ "olderThan": age }),
            None => json!({ "all": true }),
        };
        let answer: Result<DroppedMany, Refusal> =
            self.call(Method::POST, &["v1", "quarantine", "drop"], Some(body))?;
        Ok(answer.map(|many| many.dropped))
    }

    /// `POST /v1/inbox/{id}/accept` or `…/reject`: the name of the skill decided.
    pub(crate) fn inbox_decide(&self, id: i64, verdict: Verdict) -> anyhow::Result<Result<String, Refusal>> {
        let action = match verdict {
            Verdict::Accepted => "accept",
            Verdict::Rejected => "reject",
        };
        let answer: Result<Decided, Refusal> =
            self.call(Method::POST, &["v1", "inbox", &id.to_string(), action], None)?;
        Ok(answer.map(|decided| decided.entry.skill_name))
    }

    /// `POST /v1/deletions/{id}/accept` (`accept`) or `…/reject`: the skills
    /// tombstoned or written back.
    pub(crate) fn deletion_decide(
        &self,
        id: i64,
        accept: bool,
    ) -> anyhow::Result<Result<Vec<String>, Refusal>> {
        let action = if accept { "accept" } else { "reject" };
        let answer: Result<Map<String, Value>, Refusal> =
            self.call(Method::POST, &["v1", "deletions", &id.to_string(), action], None)?;
        let key = if accept { "tombstoned" } else { "restored" };
        Ok(answer.map(|mut a| serde_json::from_value(a.remove(key).unwrap_or_default()).unwrap_or_default()))
    }

    /// `DELETE /v1/quarantine/{id}`.
    pub(crate) fn drop_entry(&self, id: i64) -> anyhow::Result<Result<Dropped, Refusal>> {
        self.call(Method::DELETE, &["v1", "quarantine", &id.to_string()], None)
    }

    /// `POST /v1/skills/{name}/private`.
    pub(crate) fn make_private(&self, name: &str) -> anyhow::Result<Result<Decision, Refusal>> {
        self.call(Method::POST, &["v1", "skills", name, "private"], Some(json!({})))
    }

    /// `POST /v1/skills/{name}/share` with `{"allowSecrets": bool}`.
    pub(crate) fn share(&self, name: &str, allow_secrets: bool) -> anyhow::Result<Result<Decision, Refusal>> {
        self.call(
            Method::POST,
            &["v1", "skills", name, "share"],
            Some(json!({ "allowSecrets": allow_secrets })),
        )
    }

    /// `POST /v1/skills/{name}/outcomes`.
    pub(crate) fn report_outcome(
        &self,
        name: &str,
        body: &ReportBody,
    ) -> anyhow::Result<Result<Reported, Refusal>> {
        let body = json!({ "outcome": body.outcome, "note": body.note, "at": body.at, "id": body.id });
        self.call(Method::POST, &["v1", "skills", name, "outcomes"], Some(body))
    }

    /// `POST /v1/skills/{name}/restore`.
    pub(crate) fn restore(&self, name: &str) -> anyhow::Result<Result<Restored, Refusal>> {
        self.call(Method::POST, &["v1", "skills", name, "restore"], Some(json!({})))
    }

    /// `POST /v1/proposals/{id}/accept` or `…/reject` with `{"note"}`: the
    /// proposal as it now stands.
    pub(crate) fn proposal_decide(
        &self,
        id: &str,
        accept: bool,
        note: &str,
    ) -> anyhow::Result<Result<Value, Refusal>> {
        let action = if accept { "accept" } else { "reject" };
        let answer: Result<Map<String, Value>, Refusal> =
            self.call(Method::POST, &["v1", "proposals", id, action], Some(json!({ "note": note })))?;
        Ok(answer.map(|mut a| a.remove("proposal").unwrap_or_default()))
    }

    /// `POST /v1/skills/{name}/fork` with `{"newName"}`.
    pub(crate) fn fork(&self, name: &str, new_name: &str) -> anyhow::Result<Result<Value, Refusal>> {
        self.call(Method::POST, &["v1", "skills", name, "fork"], Some(json!({ "newName": new_name })))
    }

    /// `POST /v1/skills/{name}/{action}` (`pin`, `unpin`, `rollback`), with `{"to": …}` when given.
    pub(crate) fn version_action(
        &self,
        name: &str,
        action: &str,
        to: Option<&str>,
    ) -> anyhow::Result<Result<Done, Refusal>> {
        let body = to.map_or_else(|| json!({}), |to| json!({ "to": to }));
        self.call(Method::POST, &["v1", "skills", name, action], Some(body))
    }

    /// `POST /v1/skills/{name}/revoke`.
    pub(crate) fn revoke(
        &self,
        name: &str,
        version: &str,
        reason: &str,
    ) -> anyhow::Result<Result<Done, Refusal>> {
        let body = json!({ "version": version, "reason": reason });
        self.call(Method::POST, &["v1", "skills", name, "revoke"], Some(body))
    }

    /// `GET /v1/status`.
    pub(crate) fn status(&self) -> anyhow::Result<Result<Map<String, Value>, Refusal>> {
        self.call(Method::GET, &["v1", "status"], None)
    }

    /// `GET /v1/peers`: the answer as sent (for `--json`) and read.
    pub(crate) fn peers(&self) -> anyhow::Result<Result<(Value, Vec<PeerView>), Refusal>> {
        let answer: Result<Value, Refusal> = self.call(Method::GET, &["v1", "peers"], None)?;
        Ok(match answer {
            Ok(value) => {
                let views = serde_json::from_value(value["peers"].clone())
                    .context("the server's /v1/peers answer is not a list of peers")?;
                Ok((value, views))
            }
            Err(refusal) => Err(refusal),
        })
    }

    /// Sends one request: `segments` are the path's segments (escaped
    /// here), `body` JSON. The outer error: the server could not be
    /// reached or answered nonsense; the inner one: it refused.
    fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<Value>,
    ) -> anyhow::Result<Result<T, Refusal>> {
        let mut request = self.request(method.clone(), segments)?;
        if let Some(body) = body {
            request = request.json(&body);
        }
        self.send(request, format!("{method} {}", segments.join("/")))
    }

    /// A request to the path of `segments` (escaped here), with the token.
    fn request(&self, method: Method, segments: &[&str]) -> anyhow::Result<reqwest::RequestBuilder> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| anyhow::anyhow!("the server's URL cannot take a path"))?
            .extend(segments);
        Ok(self.client.request(method, url).bearer_auth(self.token.expose()))
    }

    /// Sends `request` (`what`, for messages) and reads its JSON answer, as [`Server::call`].
    fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        what: String,
    ) -> anyhow::Result<Result<T, Refusal>> {
        let pid = self.info.pid;
        self.runtime.block_on(async {
            let response = request.send().await.with_context(|| {
                format!("the server running on this data folder (pid {pid}) did not answer {what}; is it stopping?")
            })?;
            let status = response.status();
            let bytes = response.bytes().await.with_context(|| format!("reading the answer to {what}"))?;
            if status.is_success() {
                return serde_json::from_slice(&bytes)
                    .map(Ok)
                    .with_context(|| format!("the server's answer to {what} is not what this CLI expects"));
            }
            Ok(Err(refusal(status, &bytes)))
        })
    }

    /// `GET` of a streamed answer (`/v1/events`): hands each piece of the
    /// body to `each` as it arrives, until the server ends it or `each`
    /// says stop (`false`). No time limit but the connection's.
    pub(crate) fn stream(
        &self,
        segments: &[&str],
        mut each: impl FnMut(&[u8]) -> anyhow::Result<bool>,
    ) -> anyhow::Result<Result<(), Refusal>> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| anyhow::anyhow!("the server's URL cannot take a path"))?
            .extend(segments);
        let client = reqwest::Client::builder().no_proxy().connect_timeout(CALL_TIMEOUT).build()?;
        let request = client.get(url).bearer_auth(self.token.expose());
        let pid = self.info.pid;
        let what = format!("GET {}", segments.join("/"));
        self.runtime.block_on(async {
            let mut response = request.send().await.with_context(|| {
                format!("the server running on this data folder (pid {pid}) did not answer {what}; is it stopping?")
            })?;
            let status = response.status();
            if !status.is_success() {
                let bytes = response.bytes().await.with_context(|| format!("reading the answer to {what}"))?;
                return Ok(Err(refusal(status, &bytes)));
            }
            while let Some(chunk) =
                response.chunk().await.with_context(|| format!("the server (pid {pid}) broke off {what}"))?
            {
                if !each(&chunk)? {
                    break;
                }
            }
            Ok(Ok(()))
        })
    }
}

/// A server's error answer as a [`Refusal`].
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> Refusal {
    let error: Value = serde_json::from_slice(body).unwrap_or_default();
    Refusal {
        status: status.as_u16(),
        code: error["code"].as_str().unwrap_or("unknown").to_owned(),
        message: error["error"].as_str().unwrap_or("no reason given").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_on_loopback_is_called() {
        for ok in ["http://127.0.0.1:7327", "http://[::1]:9", "http://localhost:80", "http://127.1.2.3:5"] {
            assert!(loopback_http(ok).is_some(), "{ok}");
        }
        for refused in [
            "https://127.0.0.1:7327",
            "http://192.0.2.7:7327",
            "http://example.com:7327",
            "http://localhost.example.com",
            "http://user:pw@127.0.0.1:1",
            "not a url",
        ] {
            assert!(loopback_http(refused).is_none(), "{refused}");
        }
    }
}
