//! The HTTP client side of ECP/1.1: `GET /ecp/manifest`, `GET /ecp/skills`
//! and `POST /ecp/skills` against one peer, signed with `X-ECP-HMAC` when the
//! peer has a secret.
//!
//! Signatures follow `SPEC.md` §6.1: a GET signs the URL *path* (what Go
//! servers verify; the Go client's full-URL form is refused by Go servers),
//! a POST signs the raw body. Every request has a deadline, every answer a
//! size cap, and no error message carries the secret, a URL's credentials or
//! a local path.

use std::time::Duration;

use ecp_protocol::legacy_auth;
use ecp_protocol::{Manifest, MergeResult};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, ETAG, HeaderValue, IF_NONE_MATCH};

use crate::peers::Secret;

/// Largest answer read from a peer (after gzip decoding): a full pull of a
/// large node fits, a hostile endless answer does not.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// Longest time a connection may take to open, whatever the request timeout.
pub const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why an exchange with a peer failed. The message is safe to store and show.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No connection could be made.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The request did not complete in time.
    #[error("no complete answer within {} (timeout)", humantime::format_duration(*.0))]
    Timeout(Duration),
    /// The connection failed midway.
    #[error("request failed: {0}")]
    Transport(String),
    /// TLS failed: the peer's certificate is not trusted, or the peer
    /// refused ours (or our lack of one).
    #[error("TLS: {0}")]
    Tls(String),
    /// The peer answered with an error status.
    #[error("answered {status}{}", if .message.is_empty() { String::new() } else { format!(": {}", .message) })]
    Status {
        /// The status.
        status: StatusCode,
        /// The peer's `error` message, cut short and made one line.
        message: String,
    },
    /// The answer is larger than [`MAX_ANSWER_BYTES`].
    #[error("answer is over {} bytes", MAX_ANSWER_BYTES)]
    TooLarge,
    /// The answer is not the expected JSON.
    #[error("answer does not decode: {0}")]
    Decode(String),
}

/// An answer that may be "not modified".
#[derive(Debug)]
pub enum Fetched<T> {
    /// 304: what we hold is current.
    NotModified,
    /// 200 with a body.
    Fresh {
        /// The decoded answer.
        value: T,
        /// Its ETag, if any.
        etag: Option<String>,
        /// Bytes received (decoded).
        bytes: usize,
    },
}

/// A client for one peer.
#[derive(Debug, Clone)]
pub struct PeerClient {
    http: reqwest::Client,
    base: String,
    secret: Option<Secret>,
    timeout: Duration,
}

/// An HTTP client (a connection pool): rustls configured with `tls`, gzip,
/// connect timeout `min(timeout, 5 s)`.
pub fn http_client(timeout: Duration, tls: rustls::ClientConfig) -> Result<reqwest::Client, ClientError> {
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .connect_timeout(timeout.min(MAX_CONNECT_TIMEOUT))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("ecp-node/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ClientError::Tls(format!("cannot set up the HTTP client: {e}")))
}

impl PeerClient {
    /// A client for the peer at `base` (normalised, without a trailing slash).
    pub fn new(http: reqwest::Client, base: &str, secret: Option<Secret>, timeout: Duration) -> PeerClient {
        PeerClient { http, base: base.trim_end_matches('/').to_owned(), secret, timeout }
    }

    /// The peer's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, ClientError> {
        reqwest::Url::parse(&format!("{}{path}", self.base))
            .map_err(|e| ClientError::Transport(format!("bad peer URL: {e}")))
    }

    /// A signed GET of `path` (which may carry a query: only the path is signed).
    fn get(&self, path: &str, if_none_match: Option<&str>) -> Result<reqwest::RequestBuilder, ClientError> {
        let url = self.url(path)?;
        let mut request = self.http.get(url.clone()).timeout(self.timeout);
        if let Some(secret) = &self.secret {
            request = request
                .header(legacy_auth::HEADER, legacy_auth::sign_get(secret.expose().as_bytes(), url.path()));
        }
        if let Some(value) =
            if_none_match.filter(|t| !t.is_empty()).and_then(|t| HeaderValue::from_str(t).ok())
        {
            request = request.header(IF_NONE_MATCH, value);
        }
        Ok(request)
    }

    /// `GET /ecp/manifest`.
    pub async fn manifest(&self, if_none_match: Option<&str>) -> Result<Fetched<Manifest>, ClientError> {
        let request = self.get("/ecp/manifest", if_none_match)?;
        match self.exchange(request).await? {
            Fetched::NotModified => Ok(Fetched::NotModified),
            Fetched::Fresh { value, etag, bytes } => {
                let manifest =
                    serde_json::from_slice(&value).map_err(|e| ClientError::Decode(e.to_string()))?;
                Ok(Fetched::Fresh { value: manifest, etag, bytes })
            }
        }
    }

    /// `GET /ecp/skills?since=N`: the raw answer (decoded by the caller, off
    /// the async threads).
    pub async fn skills(
        &self,
        since: i64,
        if_none_match: Option<&str>,
    ) -> Result<Fetched<Vec<u8>>, ClientError> {
        let request = self.get(&format!("/ecp/skills?since={since}"), if_none_match)?;
        self.exchange(request).await
    }

    /// `POST /ecp/skills` with `body` (an encoded KnowledgeUpdate).
    pub async fn post_update(&self, body: Vec<u8>) -> Result<MergeResult, ClientError> {
        let mut request = self
            .http
            .post(self.url("/ecp/skills")?)
            .timeout(self.timeout)
            .header(CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.secret {
            request = request
                .header(legacy_auth::HEADER, legacy_auth::sign_post(secret.expose().as_bytes(), &body));
        }
        match self.exchange(request.body(body)).await? {
            Fetched::NotModified => Err(ClientError::Decode("304 to a POST".into())),
            Fetched::Fresh { value, .. } => {
                serde_json::from_slice(&value).map_err(|e| ClientError::Decode(e.to_string()))
            }
        }
    }

    /// Sends `request`; reads a 200 body up to the cap, or maps the failure.
    async fn exchange(&self, request: reqwest::RequestBuilder) -> Result<Fetched<Vec<u8>>, ClientError> {
        let mut response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        let etag = response.headers().get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if response.content_length().is_some_and(|n| n > MAX_ANSWER_BYTES as u64) {
            return Err(ClientError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(e))? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(ClientError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(ClientError::Status { status, message: error_message(&body) });
        }
        let bytes = body.len();
        Ok(Fetched::Fresh { value: body, etag, bytes })
    }

    fn transport_error(&self, e: reqwest::Error) -> ClientError {
        if e.is_timeout() {
            return ClientError::Timeout(self.timeout);
        }
        let connect = e.is_connect();
        // The innermost cause says what happened ("Connection refused");
        // reqwest's own text repeats the URL.
        let mut cause: &dyn std::error::Error = &e;
        while let Some(next) = cause.source() {
            if let Some(tls) = rustls_error(next) {
                return ClientError::Tls(tls_problem(tls));
            }
            cause = next;
        }
        let text = one_line(&cause.to_string(), 200);
        if connect { ClientError::Connect(text) } else { ClientError::Transport(text) }
    }
}

/// The rustls error behind `e`, if it is one. TLS errors reach us wrapped
/// in (nested) `io::Error`s, whose `source()` skips the wrapped error.
fn rustls_error<'a>(mut e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    loop {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        e = e.downcast_ref::<std::io::Error>()?.get_ref()?;
    }
}

/// What a TLS failure means for the operator, and what to do.
fn tls_problem(e: &rustls::Error) -> String {
    use rustls::{AlertDescription, CertificateError, Error};
    let hint = match e {
        Error::InvalidCertificate(CertificateError::UnknownIssuer | CertificateError::BadSignature) => {
            "the peer's certificate is not issued by a CA we trust; set `ca` in its [[peer]] to the CA that \
             issued it"
        }
        Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "the peer's certificate does not name the host of its URL; use a name or address it covers",
        Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        ) => "the peer's certificate is outside its validity period (or our clock is wrong)",
        Error::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::HandshakeFailure
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied,
        ) => {
            "the peer refused our client certificate, or our lack of one; give one its CA issued with \
             --tls-client-cert and --tls-client-key (or client_cert and client_key in its [[peer]])"
        }
        _ => "",
    };
    let text = one_line(&e.to_string(), 200);
    if hint.is_empty() { text } else { format!("{text}: {hint}") }
}

/// The `error` member of an ECP error answer, or the start of the body;
/// absolute file paths in it (Go nodes show theirs) replaced by `<path>`,
/// since the message is stored and shown.
fn error_message(body: &[u8]) -> String {
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
    let redacted: Vec<&str> = text
        .split(' ')
        .map(|word| {
            let path = word.trim_start_matches(['"', '\'', '(']);
            let endpoint = path.starts_with("/ecp/") || path.starts_with("/v1/");
            if path.starts_with('/') && path.matches('/').count() >= 2 && !endpoint { "<path>" } else { word }
        })
        .collect();
    one_line(&redacted.join(" "), 200)
}

/// `text` on one line, at most `max` characters, control characters dropped.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect::<String>()
        .trim()
        .to_owned();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_ecp_error_member_on_one_line() {
        assert_eq!(
            error_message(br#"{"error":"X-ECP-HMAC\ndoes not match","code":"bad_signature"}"#),
            "X-ECP-HMAC does not match"
        );
        assert_eq!(error_message(b"plain text"), "plain text");
        assert_eq!(
            error_message(br#"{"error":"open /home/ok/.ok/skills/x.json: denied; see /ecp/manifest"}"#),
            "open <path> denied; see /ecp/manifest"
        );
        assert_eq!(one_line(&"a".repeat(300), 10), format!("{}…", "a".repeat(10)));
    }
}
