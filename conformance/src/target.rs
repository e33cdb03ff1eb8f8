//! [`Target`]: the node under test, spoken to over HTTP and nothing else.
//!
//! Every request goes out as bytes the suite chose, and every answer comes
//! back as an [`Exchange`] kept whole (status, headers, body bytes), so a
//! check can show exactly what it sent and what it got. When the suite has
//! a key the target holds, requests are signed as ECP/1.2 (SPEC §10.1: four
//! headers over the canonical request); else, when it has the target's
//! secret, with `X-ECP-HMAC` (SPEC §6.1); both computed here with
//! `hmac`/`sha2`, unless a check asks for something else ([`Sign`]).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderMap;

use crate::packets::{self, hmac_hex};
use crate::raw_answer::parse_answer;

/// The legacy signature header (SPEC §6.1).
pub const HMAC_HEADER: &str = "x-ecp-hmac";
/// The ECP/1.2 key id header (SPEC §10.1.2).
pub const KEY_ID_HEADER: &str = "x-ecp-key-id";
/// The ECP/1.2 header naming the authority a request is signed for (SPEC §10.1.2).
pub const AUTHORITY_HEADER: &str = "x-ecp-authority";
/// The ECP/1.2 timestamp header.
pub const TIMESTAMP_HEADER: &str = "x-ecp-timestamp";
/// The ECP/1.2 nonce header.
pub const NONCE_HEADER: &str = "x-ecp-nonce";
/// The ECP/1.2 signature header.
pub const SIGNATURE_HEADER: &str = "x-ecp-signature";

/// How a request is signed.
#[derive(Debug, Clone)]
pub enum Sign {
    /// As the suite signs by default: ECP/1.2 with its first key if it has
    /// one, else `X-ECP-HMAC` with its secret if it has one, else not at all.
    Auto,
    /// `X-ECP-HMAC` with the suite's secret (path for GET, body for POST),
    /// even when it has a key.
    Legacy,
    /// No signature header at all.
    Omit,
    /// Exactly this `X-ECP-HMAC` value.
    With(String),
    /// Exactly these four ECP/1.2 headers.
    Ecp12(Signed),
}

/// A key the target holds (SPEC §10.1.1): an id and a shared secret. Its
/// `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    /// The key id, as `X-ECP-Key-Id` names it.
    pub id: String,
    secret: String,
}

impl Key {
    /// A key; `None` when `id` breaks the key id rule of SPEC §10.1.1.1.
    pub fn new(id: impl Into<String>, secret: impl Into<String>) -> Option<Key> {
        let id = id.into();
        packets::is_key_id(&id).then(|| Key { id, secret: secret.into() })
    }

    /// The secret's bytes.
    pub fn secret(&self) -> &[u8] {
        self.secret.as_bytes()
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key").field("id", &self.id).finish_non_exhaustive()
    }
}

/// The five headers of an ECP/1.2 request (SPEC §10.1.2), as text: a check
/// may change any of them after signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// `X-ECP-Authority`.
    pub authority: String,
    /// `X-ECP-Key-Id`.
    pub key_id: String,
    /// `X-ECP-Timestamp`.
    pub timestamp: String,
    /// `X-ECP-Nonce`.
    pub nonce: String,
    /// `X-ECP-Signature`.
    pub signature: String,
}

impl Signed {
    /// `(header, value)` pairs in the order of SPEC §10.1.2.
    pub fn headers(&self) -> [(&'static str, String); 5] {
        [
            (AUTHORITY_HEADER, self.authority.clone()),
            (KEY_ID_HEADER, self.key_id.clone()),
            (TIMESTAMP_HEADER, self.timestamp.clone()),
            (NONCE_HEADER, self.nonce.clone()),
            (SIGNATURE_HEADER, self.signature.clone()),
        ]
    }
}

/// A request that could not be exchanged: no connection, a timeout, a
/// broken answer. A check that meets one ends in the Error outcome.
#[derive(Debug, Clone)]
pub struct TransportError(pub String);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TransportError {}

/// One request and its answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Request method.
    pub method: String,
    /// Path and query as sent.
    pub path: String,
    /// Request headers the suite set (signatures, content type, conditions).
    pub request_headers: Vec<(String, String)>,
    /// Request body.
    pub request_body: Vec<u8>,
    /// Answer status.
    pub status: u16,
    /// Answer headers.
    pub headers: HeaderMap,
    /// Answer body (decompressed when the target gzipped it).
    pub body: Vec<u8>,
}

impl Exchange {
    /// The value of header `name`, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The value of request header `name` as the suite sent it.
    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.request_headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The body as (lossy) text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// One line describing the request: method, path, notable headers and
    /// the start of the body.
    pub fn request_line(&self) -> String {
        let mut line = format!("> {} {}", self.method, cut(&self.path, 120));
        for (name, value) in &self.request_headers {
            line.push_str(&format!("  {name}: {}", cut(value, 80)));
        }
        if !self.request_body.is_empty() {
            let body = String::from_utf8_lossy(&self.request_body);
            line.push_str(&format!("  body ({} bytes): {}", self.request_body.len(), cut(&body, 300)));
        }
        line
    }

    /// One line describing the answer: status, content type and the start of the body.
    pub fn response_line(&self) -> String {
        let ct = self.header("content-type").unwrap_or("(no content-type)");
        format!("< {} {ct}  body ({} bytes): {}", self.status, self.body.len(), cut(&self.text(), 600))
    }
}

/// `text` cut to `max` characters, on one line.
pub fn cut(text: &str, max: usize) -> String {
    let one_line: String = text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut out: String = one_line.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// The node under test.
#[derive(Debug)]
pub struct Target {
    base: String,
    secret: Option<String>,
    keys: Vec<Key>,
    legacy_refused: bool,
    timeout: Duration,
    client: reqwest::blocking::Client,
}

impl Target {
    /// A target at `url` (`http://` or `https://`, optionally with a path
    /// prefix the ECP paths go below).
    pub fn new(url: &str, secret: Option<String>, timeout: Duration) -> Result<Target, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("--target {url:?} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(format!("--target {url:?} must be an http:// or https:// URL with a host"));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(format!("--target {url:?} must not carry a query or fragment"));
        }
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .user_agent(concat!("ecp-conformance/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Target {
            base: url.trim_end_matches('/').to_owned(),
            secret,
            keys: Vec::new(),
            legacy_refused: false,
            timeout,
            client,
        })
    }

    /// The same target with the ECP/1.2 keys it holds (the first signs by default).
    pub fn with_keys(mut self, keys: Vec<Key>) -> Target {
        self.keys = keys;
        self
    }

    /// The same target, which the operator says refuses `X-ECP-HMAC` (`--no-legacy`).
    pub fn with_legacy_refused(mut self, refused: bool) -> Target {
        self.legacy_refused = refused;
        self
    }

    /// The keys the suite was given, in order.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// The first key, which signs by default.
    pub fn key(&self) -> Option<&Key> {
        self.keys.first()
    }

    /// Whether the operator says the target refuses `X-ECP-HMAC`.
    pub fn legacy_refused(&self) -> bool {
        self.legacy_refused
    }

    /// The base URL, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Whether the suite was given the target's secret.
    pub fn has_secret(&self) -> bool {
        self.secret.is_some()
    }

    /// The suite's secret, when given.
    pub fn secret(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// The full URL of `path` (which may carry a query).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The URL path the target sees for `path`: the payload of a GET signature (SPEC §6.1.3).
    pub fn signed_path(&self, path: &str) -> String {
        reqwest::Url::parse(&self.url(path)).map(|u| u.path().to_owned()).unwrap_or_else(|_| path.to_owned())
    }

    /// The request target (path and query) the request line carries for
    /// `path`: what an ECP/1.2 signature covers (SPEC §10.1.3), base path
    /// prefix included, as the HTTP client will send it.
    pub fn request_target(&self, path: &str) -> String {
        match reqwest::Url::parse(&self.url(path)) {
            Ok(u) => match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_owned(),
            },
            Err(_) => path.to_owned(),
        }
    }

    /// The authority the suite signs for (SPEC §10.1.3): the `host:port`
    /// of the target URL, lower-cased, the port always written.
    pub fn authority(&self) -> String {
        match reqwest::Url::parse(&self.base) {
            Ok(u) => format!(
                "{}:{}",
                u.host_str().unwrap_or_default().to_ascii_lowercase(),
                u.port_or_known_default().unwrap_or_default()
            ),
            Err(_) => String::new(),
        }
    }

    /// ECP/1.2 headers for a request with `key`, at `timestamp` (the
    /// header's text) with `nonce`, over `method`, `path` and `body`.
    pub fn sign_at(
        &self,
        key: &Key,
        method: &str,
        path: &str,
        body: &[u8],
        timestamp: &str,
        nonce: &str,
    ) -> Signed {
        self.sign_for(&self.authority(), key, method, path, body, timestamp, nonce)
    }

    /// [`Target::sign_at`] for `authority` instead of the target's.
    #[allow(clippy::too_many_arguments)]
    pub fn sign_for(
        &self,
        authority: &str,
        key: &Key,
        method: &str,
        path: &str,
        body: &[u8],
        timestamp: &str,
        nonce: &str,
    ) -> Signed {
        let target = self.request_target(path);
        let canonical =
            packets::canonical_request(authority, &key.id, method, &target, timestamp, nonce, body);
        Signed {
            authority: authority.to_owned(),
            key_id: key.id.clone(),
            timestamp: timestamp.to_owned(),
            nonce: nonce.to_owned(),
            signature: hmac_hex(key.secret(), canonical.as_bytes()),
        }
    }

    /// ECP/1.2 headers for a request with `key`, now, with a fresh nonce.
    pub fn sign(&self, key: &Key, method: &str, path: &str, body: &[u8]) -> Signed {
        let now = packets::unix_now().to_string();
        self.sign_at(key, method, path, body, &now, &packets::fresh_nonce())
    }

    /// `X-ECP-HMAC` with the suite's secret: over the URL path for GET and
    /// HEAD, over the body otherwise (SPEC §6.1).
    fn legacy_signature(&self, method: &Method, path: &str, body: &[u8]) -> Option<String> {
        let secret = self.secret.as_deref()?;
        // A blob PUT carries the HMAC of its path, as a GET (SPEC §12.8.5).
        if *method == Method::GET
            || *method == Method::HEAD
            || packets::blob_put_digest(method.as_str(), path).is_some()
        {
            Some(hmac_hex(secret.as_bytes(), self.signed_path(path).as_bytes()))
        } else {
            Some(hmac_hex(secret.as_bytes(), body))
        }
    }

    /// The signature headers `sign` asks for.
    fn signature_headers(
        &self,
        method: &Method,
        path: &str,
        body: &[u8],
        sign: &Sign,
    ) -> Vec<(String, String)> {
        let ecp12 = |s: Signed| s.headers().into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
        let legacy = |v: Option<String>| v.map(|v| (HMAC_HEADER.to_owned(), v)).into_iter().collect();
        match sign {
            Sign::Omit => Vec::new(),
            Sign::With(value) => legacy(Some(value.clone())),
            Sign::Legacy => legacy(self.legacy_signature(method, path, body)),
            Sign::Ecp12(signed) => ecp12(signed.clone()),
            Sign::Auto => match self.key() {
                Some(key) => ecp12(self.sign(key, method.as_str(), path, body)),
                None => legacy(self.legacy_signature(method, path, body)),
            },
        }
    }

    /// Sends one request and reads the whole answer.
    pub fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
        sign: &Sign,
    ) -> Result<Exchange, TransportError> {
        let body_bytes = body.clone().unwrap_or_default();
        let mut request_headers: Vec<(String, String)> =
            headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        request_headers.extend(self.signature_headers(&method, path, &body_bytes, sign));
        let mut request = self.client.request(method.clone(), self.url(path));
        for (name, value) in &request_headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().map_err(|e| TransportError(describe(&method, path, &e)))?;
        let status = response.status().as_u16();
        let answer_headers = response.headers().clone();
        let answer = response.bytes().map_err(|e| TransportError(describe(&method, path, &e)))?;
        Ok(Exchange {
            method: method.to_string(),
            path: path.to_owned(),
            request_headers,
            request_body: body_bytes,
            status,
            headers: answer_headers,
            body: answer.to_vec(),
        })
    }

    /// POSTs a large body while reading the answer at the same time, so a
    /// target that answers 413 and closes before reading it all is still
    /// heard. Over plain HTTP this is a raw HTTP/1.1 exchange; over HTTPS it
    /// falls back to [`Target::send`].
    pub fn post_streaming(&self, path: &str, body: Vec<u8>) -> Result<Exchange, TransportError> {
        self.send_streaming(Method::POST, path, "application/json", body)
    }

    /// [`Target::post_streaming`] for any method and content type (a blob
    /// `PUT` over the per-file limit).
    pub fn send_streaming(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Exchange, TransportError> {
        let url = reqwest::Url::parse(&self.url(path)).map_err(|e| TransportError(e.to_string()))?;
        if url.scheme() != "http" {
            return self.send(method, path, &[("content-type", content_type)], Some(body), &Sign::Auto);
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let addr = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| TransportError(format!("cannot resolve {host}: {e}")))?
            .next()
            .ok_or_else(|| TransportError(format!("{host} resolves to no address")))?;
        let stream = TcpStream::connect_timeout(&addr, self.timeout)
            .map_err(|e| TransportError(format!("{method} {path}: cannot connect to {addr}: {e}")))?;
        let _ = stream.set_read_timeout(Some(self.timeout));
        let _ = stream.set_write_timeout(Some(self.timeout));
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        let target_path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let mut request_headers = vec![("content-type".to_owned(), content_type.to_owned())];
        let mut head = format!(
            "{method} {target_path} HTTP/1.1\r\nHost: {host_header}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (name, value) in self.signature_headers(&method, path, &body, &Sign::Auto) {
            head.push_str(&format!("{name}: {value}\r\n"));
            request_headers.push((name, value));
        }
        head.push_str("\r\n");
        let mut writer = stream.try_clone().map_err(|e| TransportError(e.to_string()))?;
        let summary = body[..body.len().min(400)].to_vec();
        let body_len = body.len();
        let writing = std::thread::spawn(move || {
            if writer.write_all(head.as_bytes()).is_err() {
                return;
            }
            for chunk in body.chunks(64 * 1024) {
                if writer.write_all(chunk).is_err() {
                    return;
                }
            }
            let _ = writer.flush();
        });
        let mut reader = stream;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let parsed = loop {
            if let Some(parsed) = parse_answer(&buf, false) {
                break Some(parsed);
            }
            match reader.read(&mut chunk) {
                Ok(0) | Err(_) => break parse_answer(&buf, true),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let _ = reader.shutdown(Shutdown::Both);
        let _ = writing.join();
        let (status, headers, answer) = parsed.ok_or_else(|| {
            TransportError(format!(
                "{method} {path} ({body_len} bytes): no HTTP answer (received {} bytes)",
                buf.len()
            ))
        })?;
        let mut request_body = summary;
        if body_len > request_body.len() {
            request_body.extend_from_slice(format!("… ({body_len} bytes in all)").as_bytes());
        }
        Ok(Exchange {
            method: method.to_string(),
            path: path.to_owned(),
            request_headers,
            request_body,
            status,
            headers,
            body: answer,
        })
    }
}

fn describe(method: &Method, path: &str, e: &reqwest::Error) -> String {
    let mut text = format!("{method} {path}: ");
    if e.is_timeout() {
        text.push_str("no answer in time");
    } else if e.is_connect() {
        text.push_str("cannot connect");
    } else {
        text.push_str("the exchange failed");
    }
    let mut source: Option<&dyn std::error::Error> = Some(e);
    let mut seen = Vec::new();
    while let Some(s) = source {
        let shown = s.to_string();
        if !seen.contains(&shown) {
            text.push_str(": ");
            text.push_str(&shown);
            seen.push(shown);
        }
        source = s.source();
    }
    text
}
