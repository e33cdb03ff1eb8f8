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
use ecp_protocol::signed_auth::{
    self, Exchange, MAX_CLOCK_SKEW_SECS, PresentedHeaders, RequestLine, SignatureHeaders, SigningKey,
};
use ecp_protocol::{Manifest, MergeResult, SignedAuthError, legacy_auth, node_auth};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, ETAG, HeaderMap, HeaderValue, IF_NONE_MATCH};

use crate::config::Secret;
use crate::keys::unix_now;

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

/// Whether a transport error says the connection was gone before the
/// request could be sent or answered. Over TLS 1.3 a server that requires a
/// client certificate checks it only after the handshake has completed on
/// our side, so its refusal (an alert, then the close) races our request:
/// we see either the alert or, as often, only the closed connection.
fn closed_after_handshake(text: &str) -> bool {
    ["connection was not ready", "connection closed before message completed", "connection reset"]
        .iter()
        .any(|phrase| text.to_ascii_lowercase().contains(phrase))
}

/// What [`closed_after_handshake`] most likely means for the operator.
fn refused_after_handshake(text: &str) -> String {
    format!(
        "the peer closed the connection right after the TLS handshake ({text}): a peer that requires a client \
         certificate does this when we present none it trusts; give one its CA issued with --tls-client-cert \
         and --tls-client-key (or client_cert and client_key in its [[peer]])"
    )
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

/// The four signature headers of an answer, kept before its body is read.
fn signature_headers(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [
        signed_auth::KEY_ID_HEADER,
        signed_auth::TIMESTAMP_HEADER,
        signed_auth::NONCE_HEADER,
        signed_auth::SIGNATURE_HEADER,
    ] {
        if let Some(value) = headers.get(name) {
            kept.insert(name, value.clone());
        }
    }
    kept
}

/// Checks that an answer with `status`, `headers` and (decoded) `body` is
/// signed for the request `signed` (`SPEC.md` §10.1.6.1).
fn verify_answer(
    signed: &SignedGet,
    status: StatusCode,
    headers: &HeaderMap,
    body_digest: &str,
) -> Result<(), ClientError> {
    let presented = PresentedHeaders::read(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let exchange = Exchange {
        request: RequestLine { method: "GET", path_and_query: &signed.target },
        request_nonce: &signed.nonce,
        status: status.as_u16(),
    };
    signed_auth::verify_response_digest(
        &signed.key,
        &presented,
        &exchange,
        body_digest,
        unix_now(),
        MAX_CLOCK_SKEW_SECS,
    )
    .map_err(ClientError::AnswerNotVerified)
}

/// `url` as an error may show it: scheme, host, port and path; never its
/// credentials or query.
fn shown_url(url: &reqwest::Url) -> String {
    let port = url.port().map_or(String::new(), |p| format!(":{p}"));
    format!("{}://{}{port}{}", url.scheme(), url.host_str().unwrap_or(""), url.path())
}

/// The `error` member of an ECP error answer, or else the first line of the
/// body's text (without its tags when it is `markup`, HTML or XML: a proxy's
/// error page); absolute file paths in it (Go nodes show theirs) replaced by
/// `<path>`, since the message is stored, logged and shown — on one line of
/// at most 200 characters.
fn error_message(body: &[u8], markup: bool) -> String {
    // Only the start is read: the line shown is cut to 200 characters anyway.
    let start = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| {
            let plain = if markup || start.trim_start().starts_with('<') {
                without_tags(&start)
            } else {
                start.into_owned()
            };
            plain.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("").to_owned()
        });
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

/// The text of markup: each tag (and comment, and the content of `script`
/// and `style` elements) becomes a line break, so that the first line of
/// what is left is the page's first words — an error page's title.
fn without_tags(markup: &str) -> String {
    // ASCII lowercasing keeps every byte offset: positions found in `lower`
    // cut `markup` at the same places, and each byte is looked at once.
    let lower = markup.to_ascii_lowercase();
    let mut out = String::with_capacity(markup.len());
    let mut at = 0;
    while let Some(open) = lower[at..].find('<').map(|i| at + i) {
        out.push_str(&markup[at..open]);
        out.push('\n');
        let Some(close) = lower[open..].find('>').map(|i| open + i) else { return out };
        let name = lower[open + 1..close].split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
        at = close + 1;
        if name == "script" || name == "style" {
            at = lower[at..].find(&format!("</{name}")).map_or(lower.len(), |i| at + i);
        }
    }
    out.push_str(&markup[at..]);
    out.replace("&nbsp;", " ").replace("&amp;", "&")
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
    fn a_connection_closed_after_the_handshake_names_the_client_certificate() {
        for text in [
            "connection was not ready",
            "Connection closed before message completed",
            "connection reset by peer",
        ] {
            assert!(closed_after_handshake(text), "{text}");
            let told = refused_after_handshake(text);
            assert!(told.contains("client certificate") && told.contains("--tls-client-cert"), "{told}");
        }
        for text in ["Connection refused (os error 111)", "dns error: no such host"] {
            assert!(!closed_after_handshake(text), "{text}");
        }
    }

    #[test]
    fn error_messages_come_from_the_ecp_error_member_on_one_line() {
        assert_eq!(
            error_message(br#"{"error":"X-ECP-HMAC\ndoes not match","code":"bad_signature"}"#, false),
            "X-ECP-HMAC does not match"
        );
        assert_eq!(error_message(b"plain text", false), "plain text");
        assert_eq!(
            error_message(
                br#"{"error":"open /home/ok/.ok/skills/x.json: denied; see /ecp/manifest"}"#,
                false
            ),
            "open <path> denied; see /ecp/manifest"
        );
    }

    #[test]
    fn a_body_that_is_not_ecp_json_is_shown_as_its_first_line_of_text_without_markup() {
        let nginx = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad \
                     Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
        assert_eq!(error_message(nginx.as_bytes(), true), "502 Bad Gateway");
        let one_line_page = "<!DOCTYPE html><html><head><script>var x = \"<b>not this</b>\";</script>\
                             <STYLE>p { color: red }</STYLE></head><body><p>Service&nbsp;down &amp; out</p></body>";
        assert_eq!(
            error_message(one_line_page.as_bytes(), false),
            "Service down & out",
            "markup told by its start"
        );
        assert_eq!(error_message(b"first line\nsecond line", false), "first line");
        assert_eq!(error_message(b"\n\n  a < b, so no tags here\n", false), "a < b, so no tags here");
        assert_eq!(error_message(b"<p>unclosed <b", true), "unclosed");
        let longest = format!("<h1>{}</h1>", "x".repeat(200));
        assert_eq!(error_message(longest.as_bytes(), true), "x".repeat(200), "200 characters are kept");
        let long = format!("<h1>{}</h1>", "x".repeat(201));
        assert_eq!(error_message(long.as_bytes(), true), format!("{}…", "x".repeat(200)), "cut at 200");
        assert_eq!(error_message(b"", true), "");
    }

    #[test]
    fn a_url_is_shown_without_its_credentials_or_query() {
        let url =
            reqwest::Url::parse("https://user:pw@peer.example:8443/ecp/skills?since=4&limit=9").unwrap();
        assert_eq!(shown_url(&url), "https://peer.example:8443/ecp/skills");
        let url = reqwest::Url::parse("http://127.0.0.1/ecp/manifest").unwrap();
        assert_eq!(shown_url(&url), "http://127.0.0.1/ecp/manifest");
        assert_eq!(one_line(&"a".repeat(300), 10), format!("{}…", "a".repeat(10)));
    }
}
