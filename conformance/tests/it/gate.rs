//! [`Gate`]: an in-process ECP/1.2 node for the SIGN checks, until
//! `ecp-node` itself verifies signed requests. An axum server in front of a
//! real node (which has the legacy secret [`SECRET`]): it verifies SPEC
//! §10.1 on the three endpoints, the blob endpoints (§12.8) and the proposal
//! endpoints (§17) itself, forwards what passes re-signed with
//! `X-ECP-HMAC`, and signs the answers to signed GETs (§10.1.6). With
//! `accept_legacy` it lets requests that carry no ECP/1.2 header through to
//! the node, which judges their `X-ECP-HMAC` (§6).
//!
//! [`SignFaults`] break it one way at a time. Its verifier is written here
//! from the SPEC, separately from the suite's signer, and is checked against
//! the verify-request vectors of `signed-auth.json` below, so a correct gate
//! is a second opinion on the suite and not a mirror of it.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ecp_conformance::packets::{hmac_hex, sha256_hex};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::util::{SECRET, TestNode};

/// The first key the gate holds (and the suite signs with).
pub(crate) const KEY_A: (&str, &str) = ("ecpconf-key-a", "ecpconf-secret-a");
/// The second key the gate holds at the same time (rotation).
pub(crate) const KEY_B: (&str, &str) = ("ecpconf-key-b", "ecpconf-secret-b");

const WINDOW_SECS: i64 = 300;
const HEADERS: [&str; 4] = ["x-ecp-key-id", "x-ecp-timestamp", "x-ecp-nonce", "x-ecp-signature"];
/// The header naming the authority a request is signed for (§10.1.2).
const AUTHORITY: &str = "x-ecp-authority";

/// How a [`Gate`] is broken. All off is a correct ECP/1.2 node.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SignFaults {
    /// The timestamp is never compared with the clock.
    pub(crate) no_clock: bool,
    /// A 60 s window instead of 300 s.
    pub(crate) narrow_clock: bool,
    /// Nonces are not remembered: every replay passes.
    pub(crate) no_replay_memory: bool,
    /// Nonces are remembered without their key id.
    pub(crate) nonce_without_key: bool,
    /// A request naming an unknown key is let through unverified.
    pub(crate) unknown_keys_pass: bool,
    /// A request without the full set of headers (and no legacy header) is let through.
    pub(crate) open_without_signature: bool,
    /// The form rules of §10.1.2 are not checked (a timestamp is read up to its first non-digit).
    pub(crate) lax_form: bool,
    /// The signature is never compared.
    pub(crate) no_signature_check: bool,
    /// The body is hashed with trailing whitespace trimmed.
    pub(crate) trims_body: bool,
    /// A signature over the path without the query is accepted too.
    pub(crate) query_optional: bool,
    /// The signature is checked over the path without the query only.
    pub(crate) path_only: bool,
    /// A signature made for GET or POST is accepted for either.
    pub(crate) any_method: bool,
    /// The canonical request has the method in lower case.
    pub(crate) lowercase_method: bool,
    /// The body is never hashed: the digest of the empty string is used.
    pub(crate) empty_body_digest: bool,
    /// A signature verified once is accepted again without recomputing it.
    pub(crate) signature_cache: bool,
    /// The signature is accepted under any key the gate holds.
    pub(crate) every_key: bool,
    /// A request with X-ECP-HMAC is judged by it, whatever else it carries.
    pub(crate) legacy_wins: bool,
    /// Refusals are 403 instead of 401.
    pub(crate) answers_403: bool,
    /// Answers are never signed.
    pub(crate) unsigned_responses: bool,
    /// 304 answers are not signed.
    pub(crate) unsigned_304: bool,
    /// Answers carry a nonce of the gate's own instead of the request's.
    pub(crate) fresh_response_nonce: bool,
    /// Answers are signed over the path without the query.
    pub(crate) response_path_only: bool,
    /// Answers are always signed with the first key.
    pub(crate) responds_with_first_key: bool,
    /// The authority is not compared with the gate's own: a request signed
    /// for another node passes (the relay of #12 item 11).
    pub(crate) any_authority: bool,
    /// A request without X-ECP-Authority is verified over the unbound
    /// canonical string of earlier nodes.
    pub(crate) unbound_accepted: bool,
}

/// A request that passed: the key that signed it (none when let through
/// unverified) and its nonce.
#[derive(Debug, Clone)]
pub(crate) struct Verified {
    key_id: Option<String>,
    nonce: String,
}

/// The verifier of SPEC §10.1.4, with faults.
pub(crate) struct Verifier {
    keys: Vec<(String, Vec<u8>)>,
    faults: SignFaults,
    /// (key id, nonce) → the time after which the skew check alone refuses it.
    nonces: Mutex<HashMap<(String, String), i64>>,
    /// Signatures verified before (`signature_cache`).
    verified: Mutex<HashSet<String>>,
}

/// The canonical request of SPEC §10.1.3, written again here; without an
/// authority, the unbound one of earlier nodes (for the `unbound_accepted` fault).
fn canonical(
    authority: Option<&str>,
    key_id: &str,
    method: &str,
    target: &str,
    timestamp: &str,
    nonce: &str,
    digest: &str,
) -> String {
    match authority {
        Some(a) => {
            format!("ECP-1.2-REQUEST-FOR\n{a}\n{key_id}\n{method}\n{target}\n{timestamp}\n{nonce}\n{digest}")
        }
        None => format!("ECP-1.2-REQUEST\n{key_id}\n{method}\n{target}\n{timestamp}\n{nonce}\n{digest}"),
    }
}

/// `host:port`, the port written (§10.1.2), loosely: no blank, no control character.
fn authority_ok(text: &str) -> bool {
    text.len() <= 262
        && text.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit())
        })
        && text.bytes().all(|b| b.is_ascii_graphic())
}

fn key_id_ok(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn nonce_ok(nonce: &str) -> bool {
    (16..=128).contains(&nonce.len())
        && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b))
}

fn timestamp_of(text: &str) -> Option<i64> {
    let digits = !text.is_empty() && text.len() <= 12 && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

impl Verifier {
    pub(crate) fn new(keys: &[(&str, &str)], faults: SignFaults) -> Verifier {
        Verifier {
            keys: keys.iter().map(|(id, s)| ((*id).to_owned(), s.as_bytes().to_vec())).collect(),
            faults,
            nonces: Mutex::default(),
            verified: Mutex::default(),
        }
    }

    /// Remembers `(key id, nonce)` as accepted, until `until`.
    pub(crate) fn remember(&self, key_id: &str, nonce: &str, until: i64) {
        self.nonces.lock().unwrap().insert((key_id.to_owned(), nonce.to_owned()), until);
    }

    /// Checks a request, for a node that answers to `own` (`host:port`),
    /// in the order of §10.1.4; the error is the code.
    pub(crate) fn verify(
        &self,
        own: &str,
        method: &str,
        target: &str,
        header: impl Fn(&str) -> Option<String>,
        body: &[u8],
        now: i64,
    ) -> Result<Verified, &'static str> {
        let f = self.faults;
        // 1. All four present.
        let [Some(key_id), Some(timestamp), Some(nonce), Some(signature)] = HEADERS.map(&header) else {
            return Err("missing_signature");
        };
        // 2. Each in its form.
        let at = if f.lax_form {
            let digits: String =
                timestamp.trim_start_matches('+').chars().take_while(char::is_ascii_digit).collect();
            digits.parse().map_err(|_| "malformed_signature")?
        } else {
            let form = key_id_ok(&key_id)
                && nonce_ok(&nonce)
                && signature.len() == 64
                && signature.bytes().all(|b| b.is_ascii_hexdigit());
            let at = timestamp_of(&timestamp).ok_or("malformed_signature")?;
            if !form {
                return Err("malformed_signature");
            }
            at
        };
        // 3. Signed for this node.
        let authority = header(AUTHORITY);
        let authority = match authority {
            None if f.unbound_accepted => None,
            None => return Err("unbound_signature"),
            Some(a) if !authority_ok(&a) => return Err("malformed_signature"),
            Some(a) if !f.any_authority && !a.eq_ignore_ascii_case(own) => return Err("wrong_authority"),
            Some(a) => Some(a),
        };
        // 4. A key the gate holds.
        let Some(key) = self.keys.iter().find(|(id, _)| *id == key_id) else {
            return if f.unknown_keys_pass {
                Ok(Verified { key_id: None, nonce })
            } else {
                Err("unknown_key")
            };
        };
        // 5. Within the window.
        let window = if f.narrow_clock { 60 } else { WINDOW_SECS };
        if !f.no_clock && (at - now).abs() > window {
            return Err("clock_skew");
        }
        // 6. The signature.
        let cached = f.signature_cache && self.verified.lock().unwrap().contains(&signature);
        if !f.no_signature_check && !cached {
            let path = target.split('?').next().unwrap_or(target);
            let targets: Vec<&str> = match (f.path_only, f.query_optional) {
                (true, _) => vec![path],
                (false, true) => vec![target, path],
                (false, false) => vec![target],
            };
            let methods: Vec<String> = if f.any_method {
                vec!["GET".into(), "POST".into()]
            } else if f.lowercase_method {
                vec![method.to_ascii_lowercase()]
            } else {
                vec![method.to_ascii_uppercase()]
            };
            // A blob PUT is signed over the digest its path names (§12.8.5).
            let digest = match blob_put(method, path) {
                Some(named) => named.to_owned(),
                None => sha256_hex(match (f.empty_body_digest, f.trims_body) {
                    (true, _) => b"",
                    (false, true) => body.trim_ascii_end(),
                    (false, false) => body,
                }),
            };
            let keys: Vec<&(String, Vec<u8>)> =
                if f.every_key { self.keys.iter().collect() } else { vec![key] };
            let given = signature.to_ascii_lowercase();
            let matches = keys.iter().any(|(_, secret)| {
                methods.iter().any(|m| {
                    targets.iter().any(|t| {
                        let c = canonical(authority.as_deref(), &key_id, m, t, &timestamp, &nonce, &digest);
                        hmac_hex(secret, c.as_bytes()) == given
                    })
                })
            });
            if !matches {
                return Err("bad_signature");
            }
            if f.signature_cache {
                self.verified.lock().unwrap().insert(signature.clone());
            }
        }
        // 7. Not seen before within the window; only now remembered.
        if !f.no_replay_memory {
            let remembered = if f.nonce_without_key { String::new() } else { key_id.clone() };
            let mut nonces = self.nonces.lock().unwrap();
            nonces.retain(|_, until| *until >= now);
            let pair = (remembered, nonce.clone());
            if nonces.contains_key(&pair) {
                return Err("replayed_nonce");
            }
            nonces.insert(pair, at + WINDOW_SECS);
        }
        Ok(Verified { key_id: Some(key_id), nonce })
    }

    fn secret(&self, key_id: &str) -> Option<&[u8]> {
        self.keys.iter().find(|(id, _)| id == key_id).map(|(_, s)| s.as_slice())
    }
}

/// An ECP/1.2 node in front of a real node, see the module doc.
pub(crate) struct Gate {
    addr: SocketAddr,
    _node: TestNode,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct GateState {
    /// The gate's own `host:port`: what requests must be signed for.
    authority: String,
    backend: String,
    accept_legacy: bool,
    faults: SignFaults,
    verifier: Verifier,
    client: reqwest::Client,
}

impl Gate {
    /// A gate holding [`KEY_A`] and [`KEY_B`], in front of a fresh node with [`SECRET`].
    pub(crate) async fn start(faults: SignFaults, accept_legacy: bool) -> Gate {
        let node = TestNode::with_secret().await;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("an address");
        let state = Arc::new(GateState {
            authority: addr.to_string(),
            backend: node.url(),
            accept_legacy,
            faults,
            verifier: Verifier::new(&[KEY_A, KEY_B], faults),
            client: reqwest::Client::builder().no_proxy().build().expect("a client"),
        });
        let app = Router::new().fallback(handle).with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Gate { addr, _node: node, task }
    }

    /// Its base URL.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

fn refusal(state: &GateState, code: &str) -> Response {
    let status = if state.faults.answers_403 { StatusCode::FORBIDDEN } else { StatusCode::UNAUTHORIZED };
    let body = json!({"error": format!("signed request refused: {code}"), "code": code});
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// What the gate does with a request to one of the three endpoints.
enum Decision {
    /// Forward it as it is: the node judges its X-ECP-HMAC.
    AsIs,
    /// Forward it re-signed with X-ECP-HMAC; sign the answer when verified by a key.
    Resigned(Option<Verified>),
}

/// The decision, or the code of the refusal.
fn decide(
    state: &GateState,
    method: &Method,
    target: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Decision, &'static str> {
    let f = state.faults;
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(|v| v.trim().to_owned());
    let any = HEADERS.iter().any(|h| headers.contains_key(*h)) || headers.contains_key(AUTHORITY);
    let legacy = headers.contains_key("x-ecp-hmac");
    if legacy && (!any || f.legacy_wins) {
        return if state.accept_legacy { Ok(Decision::AsIs) } else { Err("legacy_auth_refused") };
    }
    if !any {
        return match (f.open_without_signature, state.accept_legacy) {
            (true, _) => Ok(Decision::Resigned(None)),
            (false, true) => Ok(Decision::AsIs),
            (false, false) => Err("missing_signature"),
        };
    }
    match state.verifier.verify(&state.authority, method.as_str(), target, text, body, now()) {
        Ok(v) => Ok(Decision::Resigned(Some(v))),
        Err("missing_signature") if f.open_without_signature => Ok(Decision::Resigned(None)),
        Err(code) => Err(code),
    }
}

async fn handle(State(state): State<Arc<GateState>>, request: Request) -> Response {
    let f = state.faults;
    let method = request.method().clone();
    let uri = request.uri().clone();
    let path = uri.path().to_owned();
    let target = uri.path_and_query().map_or_else(|| path.clone(), |pq| pq.as_str().to_owned());
    let headers = request.headers().clone();
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap_or_default();
    let put = blob_put(method.as_str(), &path).is_some();
    if put && body.len() > 16 * 1024 * 1024 {
        let value = json!({"error": "blob is over the per-file limit", "code": "blob_too_large"});
        let mut r = (StatusCode::PAYLOAD_TOO_LARGE, value.to_string()).into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return r;
    }
    if !put && body.len() > 8 * 1024 * 1024 {
        // The node would answer 413 before reading the body and close the
        // connection, which a forwarding client cannot hear; answer as it does.
        let value = json!({"error": "request body is over the limit", "code": "payload_too_large"});
        let mut r = (StatusCode::PAYLOAD_TOO_LARGE, value.to_string()).into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return r;
    }
    let guarded = matches!(
        (&method, path.as_str()),
        (&Method::GET, "/ecp/manifest")
            | (&Method::GET, "/ecp/skills")
            | (&Method::POST, "/ecp/skills")
            | (&Method::POST, "/ecp/blobs/missing")
            | (&Method::POST, "/ecp/proposals")
    ) || (method == Method::GET
        && ["/ecp/blobs/", "/ecp/skills/", "/ecp/proposals/"].iter().any(|p| path.starts_with(p)))
        || put;
    let decision = if guarded {
        match decide(&state, &method, &target, &headers, &body) {
            Ok(d) => d,
            Err(code) => return refusal(&state, code),
        }
    } else {
        Decision::AsIs
    };

    let mut forward =
        state.client.request(method.clone(), format!("{}{target}", state.backend)).body(body.clone());
    let resign = matches!(decision, Decision::Resigned(_));
    for (name, value) in &headers {
        let hop = [header::HOST, header::CONTENT_LENGTH, header::ACCEPT_ENCODING, header::CONNECTION];
        let signature =
            HEADERS.contains(&name.as_str()) || [AUTHORITY, "x-ecp-hmac"].contains(&name.as_str());
        if hop.contains(name) || (resign && signature) {
            continue;
        }
        forward = forward.header(name, value);
    }
    if resign {
        // GET and a blob PUT carry the HMAC of their path (§6.1, §12.8.5).
        let payload = if method == Method::GET || put { path.as_bytes() } else { &body[..] };
        forward = forward.header("x-ecp-hmac", hmac_hex(SECRET.as_bytes(), payload));
    }
    let Ok(answer) = forward.send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status();
    let mut out = HeaderMap::new();
    for name in [header::CONTENT_TYPE, header::ETAG, header::ALLOW, header::VARY] {
        if let Some(v) = answer.headers().get(&name) {
            out.insert(name, v.clone());
        }
    }
    let bytes: Bytes = answer.bytes().await.unwrap_or_default();

    let signable = status == StatusCode::OK || (status == StatusCode::NOT_MODIFIED && !f.unsigned_304);
    if let Decision::Resigned(Some(Verified { key_id: Some(key_id), nonce })) = decision
        && method == Method::GET
        && signable
        && !f.unsigned_responses
    {
        let key_id = if f.responds_with_first_key { KEY_A.0.to_owned() } else { key_id };
        let nonce = if f.fresh_response_nonce {
            format!("gate{}", &sha256_hex(nonce.as_bytes())[..28])
        } else {
            nonce
        };
        let signed_target = if f.response_path_only { path.as_str() } else { target.as_str() };
        let at = now().to_string();
        let canonical = format!(
            "ECP-1.2-RESPONSE\n{key_id}\n{}\nGET\n{signed_target}\n{at}\n{nonce}\n{}",
            status.as_u16(),
            sha256_hex(&bytes)
        );
        let secret = state.verifier.secret(&key_id).unwrap_or_default();
        let signature = hmac_hex(secret, canonical.as_bytes());
        for (name, value) in HEADERS.iter().zip([key_id, at, nonce, signature]) {
            if let Ok(v) = HeaderValue::from_str(&value) {
                out.insert(HeaderName::from_static(name), v);
            }
        }
    }
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    *response.headers_mut() = out;
    response
}

/// The gate's verifier decides every verify-request vector of
/// `protocol/testdata/vectors/signed-auth.json` as the SPEC says.
#[test]
fn the_gate_verifier_decides_the_spec_vectors() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../protocol/testdata/vectors/signed-auth.json");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the vectors")).expect("JSON");
    let cases: Vec<&Value> =
        file["cases"].as_array().expect("cases").iter().filter(|c| c["kind"] == "verify-request").collect();
    assert!(cases.len() >= 15, "{} cases", cases.len());
    for case in cases {
        let input = &case["input"];
        let keys: Vec<(&str, &str)> = input["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .map(|k| (k["id"].as_str().expect("id"), k["secret"].as_str().expect("secret")))
            .collect();
        let verifier = Verifier::new(&keys, SignFaults::default());
        let now = input["now"].as_i64().expect("now");
        for pair in input["seen_nonces"].as_array().expect("seen_nonces") {
            verifier.remember(pair[0].as_str().unwrap(), pair[1].as_str().unwrap(), now + WINDOW_SECS);
        }
        let headers = &input["headers"];
        let header = |name: &str| {
            let wanted = name.to_ascii_lowercase();
            headers
                .as_object()
                .expect("headers")
                .iter()
                .find(|(n, _)| n.to_ascii_lowercase() == wanted)
                .map(|(_, v)| v.as_str().expect("a header value").to_owned())
        };
        let outcome = verifier.verify(
            input["answers_to"][0].as_str().expect("the authority the node answers to"),
            input["method"].as_str().unwrap(),
            input["path_and_query"].as_str().unwrap(),
            header,
            input["body"].as_str().unwrap().as_bytes(),
            now,
        );
        let got = match outcome {
            Ok(_) => "ok",
            Err(code) => code,
        };
        assert_eq!(got, case["expected"]["outcome"], "{}", case["description"]);
    }
}

/// The digest a `PUT /ecp/blobs/{sha256}` names, written here from §12.8.5.
fn blob_put<'a>(method: &str, path: &'a str) -> Option<&'a str> {
    let digest = path.strip_prefix("/ecp/blobs/")?;
    let hex64 = digest.len() == 64 && digest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (method == "PUT" && hex64).then_some(digest)
}
