//! The HTTP client side of ECP: `GET /ecp/manifest`, `GET /ecp/skills` and
//! `POST /ecp/skills` against one peer, and the blob endpoints of bundles
//! (`GET` and `PUT /ecp/blobs/{sha256}`, `POST /ecp/blobs/missing`), signed
//! as its [`Credentials`] say.
//!
//! With a key, every request carries the ECP/1.2 signature (`SPEC.md`
//! §10.1): method, the request target exactly as sent, the body's digest, the
//! time and a fresh nonce of 128 random bits from the operating system's
//! CSPRNG. Answers to GETs (200 and 304) must come back signed with the same
//! key and nonce; one that is not is an error and none of it is used, so a
//! pull over plain HTTP can be neither altered nor answered with a recorded
//! answer. Towards a legacy (Go) peer the request also carries `X-ECP-HMAC`
//! (§6.1: a GET signs the URL *path*, what Go servers verify; a POST the raw
//! body), and its answers are taken unsigned.
//!
//! With the node's own Ed25519 key, every request also carries
//! `X-ECP-Node-Signature` (`SPEC.md` §13.11): it proves which node sent it
//! to a peer that knows the key (a `[[peer]]` with `key`), and is ignored
//! by any other.
//!
//! Every request has a deadline, every answer a size cap, and no error
//! message carries a secret, a URL's credentials or a local path.
//!
//! Redirects are never followed: a 3xx answer is an error. Following one
//! would merge another host's answer as the peer's and send that host the
//! signing headers, which it could replay at any node holding the same key.

use std::time::Duration;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::signed_auth::{self, RequestLine, SignatureHeaders, SigningKey};
use ecp_protocol::{Manifest, MergeResult, SignedAuthError, legacy_auth, node_auth};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, ETAG, HeaderMap, HeaderValue, IF_NONE_MATCH};

use crate::config::Secret;

mod answer_signature;
mod described;
use crate::keys::unix_now;
use answer_signature::{signature_headers, verify_answer};
use described::{
    closed_after_handshake, error_message, one_line, refused_after_handshake, rustls_error, shown_url,
    tls_problem,
};

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
    #[error("HTTP {} from {url}: {message}", .status.as_u16())]
    Status {
        /// The status.
        status: StatusCode,
        /// What was asked: scheme, host, port and path, without credentials or query.
        url: String,
        /// The peer's `error` message, or the first line of its body's text
        /// without markup, at most 200 characters ([`error_message`]).
        message: String,
    },
    /// A request signed with ECP/1.2 only was answered 403, as a Go node
    /// with a secret answers a request without a valid `X-ECP-HMAC` (our
    /// nodes answer 401 to a bad signature). Never retried with the legacy
    /// header on its own: that constant token would be a downgrade
    /// (`SPEC.md` §6.5.1).
    #[error(
        "HTTP {} from {url}: {message}; the peer refused ECP/1.2 signatures; if it is an ECP/1.1 node, mark \
         it `legacy = true` (peers.toml) or pass `--legacy`",
        .status.as_u16()
    )]
    SignaturesRefused {
        /// The status (403).
        status: StatusCode,
        /// What was asked, as [`ClientError::Status`] shows it.
        url: String,
        /// The peer's message, as [`ClientError::Status`] has it.
        message: String,
    },
    /// The peer answered with a redirect, which ECP requests never follow.
    #[error(
        "answered {0} (a redirect); ECP requests do not follow redirects, so nothing was sent on: \
         configure the peer's final URL"
    )]
    Redirect(StatusCode),
    /// The answer is larger than [`MAX_ANSWER_BYTES`].
    #[error("answer is over {} bytes", MAX_ANSWER_BYTES)]
    TooLarge,
    /// The answer is not the expected JSON.
    #[error("answer does not decode: {0}")]
    Decode(String),
    /// A blob's body is longer than the blob it was asked for can be.
    #[error("the peer answered with other bytes than the blob asked for: {0}")]
    WrongBlob(String),
    /// The answer to a signed GET is not signed with the request's key and
    /// nonce: altered or replayed on the way, or the peer lacks the key.
    #[error(
        "answer refused, its ECP/1.2 signature does not verify ({0}); nothing of it was used. Either \
         something between the nodes altered or replayed it, or the peer does not hold the key this node \
         signs with (configure the same key on both sides, or legacy = true for a peer that cannot sign)"
    )]
    AnswerNotVerified(SignedAuthError),
}

/// How requests to one peer are authenticated.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// The ECP/1.2 key every request is signed with; `None`: unsigned.
    pub key: Option<SigningKey>,
    /// The shared secret for `X-ECP-HMAC`, sent only to legacy peers.
    pub legacy_secret: Option<Secret>,
    /// Require answers to GETs to be signed (every peer with a key, except legacy ones).
    pub verify_answers: bool,
    /// The node's own key: every request carries a node-key signature made with it.
    pub node_key: Option<NodeKey>,
}

/// A fresh nonce: 128 bits from the thread's CSPRNG (ChaCha, seeded by the
/// operating system), as 32 hex characters.
fn fresh_nonce() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// A GET on its way: what its answer must be signed for.
#[derive(Debug)]
struct SignedGet {
    key: SigningKey,
    target: String,
    nonce: String,
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

/// An answer taken up to its body ([`PeerClient::answer`]).
enum Answer {
    /// 304, its signature checked.
    NotModified,
    /// 2xx, the body still to read.
    Fresh {
        /// Boxed: a response is large, and the other variant is empty.
        response: Box<reqwest::Response>,
        /// The signature headers its body must verify against, when answers are verified.
        signature: Option<HeaderMap>,
        etag: Option<String>,
    },
}

/// The body of a blob as it arrives ([`PeerClient::blob`]): read with
/// [`BlobAnswer::chunk`] until it ends, then [`BlobAnswer::verify`]. The
/// caller hashes what it reads (`BlobWriter`): the signature is checked
/// against the digest the path names, which binds the bytes only once the
/// caller has found them to hash to it.
#[derive(Debug)]
pub struct BlobAnswer {
    client: PeerClient,
    response: reqwest::Response,
    signed: Option<(SignedGet, HeaderMap)>,
    sha256: String,
    limit: u64,
    read: u64,
}

impl BlobAnswer {
    /// The next piece of the body; `None` at its end.
    ///
    /// # Errors
    ///
    /// [`ClientError::WrongBlob`] once more bytes than the limit have arrived,
    /// or the transport's failure.
    pub async fn chunk(&mut self) -> Result<Option<impl AsRef<[u8]> + use<>>, ClientError> {
        let Some(chunk) = self.response.chunk().await.map_err(|e| self.client.transport_error(e))? else {
            return Ok(None);
        };
        self.read = self.read.saturating_add(chunk.len() as u64);
        if self.read > self.limit {
            return Err(ClientError::WrongBlob(format!(
                "blob {} is {} bytes or more, over the {} it may have",
                self.sha256, self.read, self.limit
            )));
        }
        Ok(Some(chunk))
    }

    /// Checks the answer's signature, when answers are verified, as one
    /// over a body whose SHA-256 is the blob's name.
    ///
    /// # Errors
    ///
    /// [`ClientError::AnswerNotVerified`].
    pub fn verify(self) -> Result<(), ClientError> {
        match &self.signed {
            Some((signed, signature)) => {
                verify_answer(signed, self.response.status(), signature, &self.sha256)
            }
            None => Ok(()),
        }
    }
}

/// A client for one peer.
#[derive(Debug, Clone)]
pub struct PeerClient {
    http: reqwest::Client,
    base: String,
    credentials: Credentials,
    timeout: Duration,
}

/// An HTTP client (a connection pool): rustls configured with `tls`, gzip,
/// connect timeout `min(timeout, 5 s)`, no redirects followed.
pub fn http_client(timeout: Duration, tls: rustls::ClientConfig) -> Result<reqwest::Client, ClientError> {
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .connect_timeout(timeout.min(MAX_CONNECT_TIMEOUT))
        .pool_idle_timeout(Duration::from_secs(90))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("ecp-node/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ClientError::Tls(format!("cannot set up the HTTP client: {e}")))
}

impl PeerClient {
    /// A client for the peer at `base` (normalised, without a trailing slash).
    pub fn new(http: reqwest::Client, base: &str, credentials: Credentials, timeout: Duration) -> PeerClient {
        PeerClient { http, base: base.trim_end_matches('/').to_owned(), credentials, timeout }
    }

    /// The peer's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, ClientError> {
        reqwest::Url::parse(&format!("{}{path}", self.base))
            .map_err(|e| ClientError::Transport(format!("bad peer URL: {e}")))
    }

    /// The ECP/1.2 headers for `method` on `url` with `body`, when there is
    /// a key; with the target as signed and the nonce drawn.
    fn sign(&self, method: &str, url: &reqwest::Url, body: &[u8]) -> Option<(SignatureHeaders, SignedGet)> {
        self.sign_digest(method, url, &signed_auth::body_digest(body))
    }

    /// [`PeerClient::sign`] for a body whose hex SHA-256 is `body_digest`.
    fn sign_digest(
        &self,
        method: &str,
        url: &reqwest::Url,
        body_digest: &str,
    ) -> Option<(SignatureHeaders, SignedGet)> {
        let key = self.credentials.key.as_ref()?;
        // What reqwest sends on the request line: the path and the query as the URL holds them.
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        // Bound to the node this URL reaches (`SPEC.md` §10.1.3): the node
        // refuses the request if anyone relays it to another node.
        let host = url.host_str()?;
        let authority = signed_auth::authority(host, url.port_or_known_default()?);
        let nonce = fresh_nonce();
        let line = RequestLine { method, path_and_query: &target };
        let headers =
            signed_auth::sign_request_digest(key, &authority, &line, body_digest, unix_now(), &nonce);
        Some((headers, SignedGet { key: key.clone(), target, nonce }))
    }

    /// `request` (`method` on `url`, with a body whose hex SHA-256 is
    /// `body_digest`) with the node-key signature, when the node has a key.
    fn prove(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        url: &reqwest::Url,
        body_digest: &str,
    ) -> reqwest::RequestBuilder {
        let Some(key) = &self.credentials.node_key else { return request };
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else { return request };
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let line = RequestLine { method, path_and_query: &target };
        let authority = signed_auth::authority(host, port);
        let value = node_auth::sign_request(key, &authority, &line, body_digest, unix_now(), &fresh_nonce());
        request.header(node_auth::HEADER, value)
    }

    /// A signed GET of `path` (which may carry a query), and what its answer
    /// must be signed for when answers are verified.
    fn get(
        &self,
        path: &str,
        if_none_match: Option<&str>,
    ) -> Result<(reqwest::RequestBuilder, Option<SignedGet>), ClientError> {
        let url = self.url(path)?;
        let empty = signed_auth::body_digest(b"");
        let mut request = self.prove(self.http.get(url.clone()).timeout(self.timeout), "GET", &url, &empty);
        let mut expect = None;
        if let Some((headers, signed)) = self.sign("GET", &url, b"") {
            for (name, value) in headers.pairs() {
                request = request.header(name, value);
            }
            expect = self.credentials.verify_answers.then_some(signed);
        }
        if let Some(secret) = &self.credentials.legacy_secret {
            // Go servers verify the path alone (`SPEC.md` §6.1.3).
            request = request
                .header(legacy_auth::HEADER, legacy_auth::sign_get(secret.expose().as_bytes(), url.path()));
        }
        if let Some(value) =
            if_none_match.filter(|t| !t.is_empty()).and_then(|t| HeaderValue::from_str(t).ok())
        {
            request = request.header(IF_NONE_MATCH, value);
        }
        Ok((request, expect))
    }

    /// `GET /ecp/manifest`.
    pub async fn manifest(&self, if_none_match: Option<&str>) -> Result<Fetched<Manifest>, ClientError> {
        let (request, expect) = self.get("/ecp/manifest", if_none_match)?;
        match self.exchange(request, expect).await? {
            Fetched::NotModified => Ok(Fetched::NotModified),
            Fetched::Fresh { value, etag, bytes } => {
                let manifest =
                    serde_json::from_slice(&value).map_err(|e| ClientError::Decode(e.to_string()))?;
                Ok(Fetched::Fresh { value: manifest, etag, bytes })
            }
        }
    }

    /// `GET /ecp/skills?since=N&limit=M`: the raw answer (decoded by the
    /// caller, off the async threads), a page when the peer pages
    /// (`SPEC.md` §10.2.5).
    pub async fn skills(
        &self,
        since: i64,
        limit: usize,
        if_none_match: Option<&str>,
    ) -> Result<Fetched<Vec<u8>>, ClientError> {
        let (request, expect) =
            self.get(&format!("/ecp/skills?since={since}&limit={limit}"), if_none_match)?;
        self.exchange(request, expect).await
    }

    /// `POST /ecp/skills` with `body` (an encoded KnowledgeUpdate).
    pub async fn post_update(&self, body: Vec<u8>) -> Result<MergeResult, ClientError> {
        // The answer to a POST is not signed (`SPEC.md` §10.1.6): the MergeResult is a report, not data.
        let request = self.post("/ecp/skills", &body)?;
        match self.exchange(request.body(body), None).await? {
            Fetched::NotModified => Err(ClientError::Decode("304 to a POST".into())),
            Fetched::Fresh { value, .. } => {
                serde_json::from_slice(&value).map_err(|e| ClientError::Decode(e.to_string()))
            }
        }
    }

    /// `POST /ecp/proposals` with `body` (an encoded proposal, `SPEC.md`
    /// §17): the raw answer.
    pub async fn post_proposal(&self, body: Vec<u8>) -> Result<Vec<u8>, ClientError> {
        let request = self.post(ecp_protocol::proposal::PROPOSALS_PATH, &body)?;
        match self.exchange(request.body(body), None).await? {
            Fetched::NotModified => Err(ClientError::Decode("304 to a POST".into())),
            Fetched::Fresh { value, .. } => Ok(value),
        }
    }

    /// `GET /ecp/proposals/{id}` (`SPEC.md` §17.5): the raw answer. `id`
    /// must be a proposal id (nothing in it needs escaping).
    pub async fn proposal(&self, id: &str) -> Result<Vec<u8>, ClientError> {
        let (request, expect) =
            self.get(&format!("{}/{id}", ecp_protocol::proposal::PROPOSALS_PATH), None)?;
        match self.exchange(request, expect).await? {
            Fetched::NotModified => Err(ClientError::Decode("304 without a conditional request".into())),
            Fetched::Fresh { value, .. } => Ok(value),
        }
    }

    /// `GET /ecp/skills/{name}?digest=HEX` (`SPEC.md` §5.7): the raw
    /// answer, a KnowledgeUpdate holding that one version; `None` when the
    /// peer answers 404 (it serves no such version). `name` must be a valid
    /// skill name (nothing in it needs escaping).
    pub async fn skill_version(&self, name: &str, digest: &str) -> Result<Option<Vec<u8>>, ClientError> {
        let (request, expect) = self.get(&format!("/ecp/skills/{name}?digest={digest}"), None)?;
        match self.exchange(request, expect).await {
            Ok(Fetched::Fresh { value, .. }) => Ok(Some(value)),
            Ok(Fetched::NotModified) => Err(ClientError::Decode("304 to a request without a tag".into())),
            Err(ClientError::Status { status, .. }) if status == StatusCode::NOT_FOUND => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET /ecp/blobs/{sha256}` (`SPEC.md` §12.8.2), its body read as it
    /// arrives ([`BlobAnswer`]) rather than held whole: refused before it
    /// is read when its `Content-Length` is over `limit` bytes, and as soon
    /// as more than `limit` arrive.
    pub async fn blob(&self, sha256: &str, limit: u64) -> Result<BlobAnswer, ClientError> {
        let (request, expect) = self.get(&format!("/ecp/blobs/{sha256}"), None)?;
        let Answer::Fresh { response, signature, .. } = self.answer(request, expect.as_ref()).await? else {
            return Err(ClientError::Decode("304 to a blob request without a tag".into()));
        };
        let too_long = |size: u64| {
            ClientError::WrongBlob(format!(
                "blob {sha256} is {size} bytes or more, over the {limit} it may have"
            ))
        };
        if let Some(size) = response.content_length().filter(|&n| n > limit) {
            return Err(too_long(size));
        }
        Ok(BlobAnswer {
            client: self.clone(),
            response: *response,
            signed: expect.zip(signature),
            sha256: sha256.to_owned(),
            limit,
            read: 0,
        })
    }

    /// `POST /ecp/blobs/missing` (`SPEC.md` §12.8.3): of `blobs` (at most
    /// 1,000), those the peer does not hold.
    pub async fn missing_blobs(&self, blobs: &[String]) -> Result<Vec<String>, ClientError> {
        let query = ecp_protocol::wire::BlobQuery { blobs: blobs.to_vec() };
        let body = serde_json::to_vec(&query).map_err(|e| ClientError::Decode(e.to_string()))?;
        let request = self.post("/ecp/blobs/missing", &body)?;
        match self.exchange(request.body(body), None).await? {
            Fetched::NotModified => Err(ClientError::Decode("304 to a POST".into())),
            Fetched::Fresh { value, .. } => {
                serde_json::from_slice::<ecp_protocol::wire::MissingBlobs>(&value)
                    .map(|m| m.missing)
                    .map_err(|e| ClientError::Decode(e.to_string()))
            }
        }
    }

    /// `PUT /ecp/blobs/{sha256}` with the blob's bytes (`SPEC.md` §12.8.4),
    /// signed over the digest its path names.
    pub async fn put_blob(&self, sha256: &str, bytes: Vec<u8>) -> Result<(), ClientError> {
        let url = self.url(&format!("/ecp/blobs/{sha256}"))?;
        let request =
            self.http.put(url.clone()).timeout(self.timeout).header(CONTENT_TYPE, "application/octet-stream");
        let mut request = self.prove(request, "PUT", &url, sha256);
        if let Some((headers, _)) = self.sign_digest("PUT", &url, sha256) {
            for (name, value) in headers.pairs() {
                request = request.header(name, value);
            }
        }
        if let Some(secret) = &self.credentials.legacy_secret {
            // As a GET's: the path, whose digest binds the content.
            request = request
                .header(legacy_auth::HEADER, legacy_auth::sign_get(secret.expose().as_bytes(), url.path()));
        }
        self.exchange(request.body(bytes), None).await.map(drop)
    }

    /// A signed POST of `body` to `path` (its answer is not signed, `SPEC.md` §10.1.6).
    fn post(&self, path: &str, body: &[u8]) -> Result<reqwest::RequestBuilder, ClientError> {
        let url = self.url(path)?;
        let request =
            self.http.post(url.clone()).timeout(self.timeout).header(CONTENT_TYPE, "application/json");
        let mut request = self.prove(request, "POST", &url, &signed_auth::body_digest(body));
        if let Some((headers, _)) = self.sign("POST", &url, body) {
            for (name, value) in headers.pairs() {
                request = request.header(name, value);
            }
        }
        if let Some(secret) = &self.credentials.legacy_secret {
            request =
                request.header(legacy_auth::HEADER, legacy_auth::sign_post(secret.expose().as_bytes(), body));
        }
        Ok(request)
    }

    /// Sends `request`; reads a 200 body up to the cap, or maps the failure.
    /// With `expect`, a 200 or 304 is used only if signed for that request.
    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        expect: Option<SignedGet>,
    ) -> Result<Fetched<Vec<u8>>, ClientError> {
        let (mut response, signature, etag) = match self.answer(request, expect.as_ref()).await? {
            Answer::NotModified => return Ok(Fetched::NotModified),
            Answer::Fresh { response, signature, etag } => (*response, signature, etag),
        };
        if response.content_length().is_some_and(|n| n > MAX_ANSWER_BYTES as u64) {
            return Err(ClientError::TooLarge);
        }
        let status = response.status();
        let body = self.read_capped(&mut response).await?;
        if let (Some(signed), Some(signature)) = (&expect, &signature) {
            verify_answer(signed, status, signature, &signed_auth::body_digest(&body))?;
        }
        let bytes = body.len();
        Ok(Fetched::Fresh { value: body, etag, bytes })
    }

    /// Sends `request` and takes its answer up to its body: a 304 (checked
    /// against `expect`), or a 2xx with the signature headers to check its
    /// body against; any other status is the failure it says.
    async fn answer(
        &self,
        request: reqwest::RequestBuilder,
        expect: Option<&SignedGet>,
    ) -> Result<Answer, ClientError> {
        let mut response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            return Err(ClientError::Redirect(status));
        }
        if status == StatusCode::NOT_MODIFIED {
            if let Some(signed) = expect {
                verify_answer(signed, status, response.headers(), &signed_auth::body_digest(b""))?;
            }
            return Ok(Answer::NotModified);
        }
        if status.is_success() {
            let signature = expect.map(|_| signature_headers(response.headers()));
            let etag = response.headers().get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
            return Ok(Answer::Fresh { response: Box::new(response), signature, etag });
        }
        let body = self.read_capped(&mut response).await?;
        let markup = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("html") || t.contains("xml"));
        let message = error_message(&body, markup);
        let message = if message.is_empty() {
            status.canonical_reason().unwrap_or("no reason given").to_owned()
        } else {
            message
        };
        let url = shown_url(response.url());
        let signed_only = self.credentials.key.is_some() && self.credentials.legacy_secret.is_none();
        if status == StatusCode::FORBIDDEN && signed_only {
            return Err(ClientError::SignaturesRefused { status, url, message });
        }
        Err(ClientError::Status { status, url, message })
    }

    /// The body of `response`, at most [`MAX_ANSWER_BYTES`].
    async fn read_capped(&self, response: &mut reqwest::Response) -> Result<Vec<u8>, ClientError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(e))? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(ClientError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
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
        if self.base.starts_with("https://") && closed_after_handshake(&text) {
            return ClientError::Tls(refused_after_handshake(&text));
        }
        if connect { ClientError::Connect(text) } else { ClientError::Transport(text) }
    }
}
