//! Who may see the status page and press its buttons, and how a browser
//! proves it: [`Access`], the node's page keys — one-time login tickets
//! (what `ecp-node ui` prints a link with), the session cookie a ticket
//! buys, the per-node CSRF token of every form — and [`guard`], the
//! middleware in front of the page and its form endpoints.
//!
//! Everything is keyed by the API token (`<data>/api-token`): whoever can
//! read it can mint a ticket (the CLI does), so a ticket is worth exactly
//! the token; cookies and CSRF tokens derived from it survive restarts and
//! die with it. Each value is an HMAC-SHA256 under the token with a purpose
//! of its own, so one can never stand for another.
//!
//! A browser is a client that sends credentials by itself, so the page adds
//! what `/v1/` does not need: the `Host` must be one the node answers to
//! (a DNS-rebinding page names its own host), and a POST must come from the
//! page itself — `Sec-Fetch-Site: same-origin` when the browser sends it,
//! an `Origin` equal to the node's own when it sends one, and the CSRF
//! token in the form. The cookie is `HttpOnly` and `SameSite=Strict`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::super::authority;
use super::super::error::ApiError;
use super::super::guard;
use super::super::state::AppState;
use crate::config::{Config, Secret};

/// How long a login link works after `ecp-node ui` printed it, seconds.
pub const TICKET_SECONDS: u64 = 10 * 60;
/// How long a browser stays logged in, seconds.
pub const SESSION_SECONDS: u64 = 12 * 60 * 60;
/// Login tickets remembered as used at once (only holders of the token can
/// make valid ones, so this bounds honest use, not an attack).
pub const USED_TICKETS_MAX: usize = 1024;

/// The purposes the token signs, each apart.
const LOGIN: &str = "ecp status page login";
const SESSION: &str = "ecp status page session";
const CSRF: &str = "ecp status page csrf";

/// The node's page keys and the login tickets already used (its `Debug`
/// shows none of them).
pub struct Access {
    /// The API token, or random bytes when the node has none (router-only
    /// tests): no ticket can then be made, so no browser logs in.
    key: Secret,
    /// The CSRF token every form carries.
    csrf: String,
    /// Used tickets' nonces, with when they expire.
    used: Mutex<HashMap<String, u64>>,
}

impl Access {
    /// The page keys of a node whose API token is `token`.
    pub fn new(token: Option<&Secret>) -> Access {
        let key = token.cloned().unwrap_or_else(|| Secret::new(hex::encode(rand::random::<[u8; 32]>())));
        let csrf = mac(&key, CSRF, "");
        Access { key, csrf, used: Mutex::new(HashMap::new()) }
    }

    /// The CSRF token the page puts in its forms.
    pub(super) fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Whether `presented` is the CSRF token (constant time).
    pub(super) fn csrf_matches(&self, presented: &str) -> bool {
        Secret::new(self.csrf.clone()).matches(presented)
    }

    /// Takes the login ticket `ticket` at `now` (unix seconds): the value
    /// of a session cookie when it is genuine, unexpired and not used before.
    pub(super) fn log_in(&self, ticket: &str, now: u64) -> Option<String> {
        let mut parts = ticket.splitn(3, '.');
        let (expiry, nonce, tag) = (parts.next()?, parts.next()?, parts.next()?);
        let expiry_secs: u64 = expiry.parse().ok()?;
        if expiry_secs <= now
            || expiry_secs > now + TICKET_SECONDS
            || !verify(&self.key, LOGIN, &format!("{expiry}.{nonce}"), tag)
        {
            return None;
        }
        let mut used = self.used.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        used.retain(|_, until| *until > now);
        if used.len() >= USED_TICKETS_MAX || used.insert(nonce.to_owned(), expiry_secs).is_some() {
            return None;
        }
        let until = (now + SESSION_SECONDS).to_string();
        Some(format!("{until}.{}", mac(&self.key, SESSION, &until)))
    }

    /// Whether `cookie` is a session this node gave out, unexpired at `now`.
    pub(super) fn session_valid(&self, cookie: &str, now: u64) -> bool {
        let Some((until, tag)) = cookie.split_once('.') else { return false };
        until.parse::<u64>().is_ok_and(|t| t > now) && verify(&self.key, SESSION, until, tag)
    }
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access").finish_non_exhaustive()
    }
}

/// The login link to the node at `base_url` (as `server.json` has it) for
/// the holder of its API `token`, working once within [`TICKET_SECONDS`]
/// of `now` (unix seconds): what `ecp-node ui` prints.
pub fn login_link(base_url: &str, token: &Secret, now: u64) -> String {
    let expiry = (now + TICKET_SECONDS).to_string();
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    let tag = mac(token, LOGIN, &format!("{expiry}.{nonce}"));
    format!("{}/login?ticket={expiry}.{nonce}.{tag}", base_url.trim_end_matches('/'))
}

fn hmac_of(key: &Secret, purpose: &str, payload: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key.expose().as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(purpose.as_bytes());
    mac.update(b"\n");
    mac.update(payload.as_bytes());
    mac
}

fn mac(key: &Secret, purpose: &str, payload: &str) -> String {
    hex::encode(hmac_of(key, purpose, payload).finalize().into_bytes())
}

/// Whether `tag` (hex) is the MAC of `payload` for `purpose` (constant time).
fn verify(key: &Secret, purpose: &str, payload: &str, tag: &str) -> bool {
    hex::decode(tag).is_ok_and(|tag| hmac_of(key, purpose, payload).verify_slice(&tag).is_ok())
}

/// Seconds since the epoch.
pub(super) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The session cookie's name: browsers share cookies across the ports of
/// a host, so it carries the node's instance id (letters, digits, `-`),
/// lower-cased so one node's name is one token whatever the id's case.
pub(super) fn cookie_name(instance: &str) -> String {
    let id: String = instance
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    format!("ecp-session-{id}")
}

/// The `Set-Cookie` value that logs a browser in with `session`.
pub(super) fn set_cookie(config: &Config, instance: &str, session: &str) -> HeaderValue {
    let secure = if config.tls.cert.is_some() { "; Secure" } else { "" };
    let text = format!(
        "{}={session}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}{secure}",
        cookie_name(instance)
    );
    HeaderValue::from_str(&text).expect("names and values are ASCII")
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(key, value)| (key == name).then_some(value))
}

/// Guards the page and its form endpoints: a `Host` the node answers to;
/// then a valid session cookie, or whatever opens `/v1/` (the API token as
/// `Authorization: Bearer`, the secret, a signed GET, trusted loopback); a
/// POST must also come from the page itself ([`same_origin`]).
pub(super) async fn guard(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let host = own_host(&state, &request)?;
    if request.method() == Method::POST {
        same_origin(request.headers(), &host, state.config.tls.cert.is_some())?;
    }
    let name = cookie_name(state.library.store().instance_id());
    if cookie(request.headers(), &name).is_some_and(|c| state.status_page.session_valid(c, unix_now())) {
        return Ok(next.run(request).await);
    }
    guard::v1(State(state), ConnectInfo(peer), request, next).await.map_err(|e| {
        if e.status == StatusCode::UNAUTHORIZED {
            login_required().with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
        } else {
            e
        }
    })
}

/// The request's `Host`, when it names this node: a page served under
/// another name (DNS rebinding) would be that name's origin, and its
/// scripts could read it.
pub(super) fn own_host(state: &AppState, request: &Request) -> Result<String, ApiError> {
    if let Some(host) = authority::own_host(&state.config.names, state.config.listen, request) {
        return Ok(host);
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "unknown_host",
        "the status page answers only to the node's own address (or a name in [server] names); open the link \
         `ecp-node ui` prints",
    ))
}

/// Refuses a request a browser says came from another site or origin.
/// Clients that are not browsers send neither header, and need the API
/// token and the CSRF token all the same.
fn same_origin(headers: &HeaderMap, host: &str, tls: bool) -> Result<(), ApiError> {
    let fetched_from = headers.get("sec-fetch-site").map(|v| v.to_str().unwrap_or(""));
    if fetched_from.is_some_and(|site| site != "same-origin") {
        return Err(cross_site("Sec-Fetch-Site says it came from another site or origin"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let scheme = if tls { "https" } else { "http" };
        if origin.to_str().map_or(true, |o| !o.eq_ignore_ascii_case(&format!("{scheme}://{host}"))) {
            return Err(cross_site("its Origin is not this node"));
        }
    }
    Ok(())
}

fn cross_site(why: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "cross_site_refused",
        format!("refused: {why}; press the buttons on the node's own status page"),
    )
}

/// The answer to a page request without credentials.
fn login_required() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "login_required",
        format!(
            "the status page needs a login: open the link `ecp-node ui` prints (run it as the user who runs the \
             node), or send Authorization: Bearer <token>, the token being the file {} in the node's data folder",
            crate::api_token::TOKEN_FILE
        ),
    )
}

/// The answer to a login link that does not work.
pub(super) fn bad_ticket() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "login_link_invalid",
        format!(
            "this login link is not valid, has expired (links work {} minutes) or was used already; run \
             `ecp-node ui` for a new one",
            TICKET_SECONDS / 60
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> (Access, Secret) {
        let token = Secret::new("a".repeat(64));
        (Access::new(Some(&token)), token)
    }

    fn ticket(link: &str) -> &str {
        link.split_once("?ticket=").unwrap().1
    }

    #[test]
    fn a_ticket_works_once_and_buys_a_session_until_it_expires() {
        let (access, token) = access();
        let now = 1_800_000_000;
        let link = login_link("http://127.0.0.1:7327/", &token, now);
        assert!(link.starts_with("http://127.0.0.1:7327/login?ticket="), "{link}");
        let session = access.log_in(ticket(&link), now).expect("a fresh ticket logs in");
        assert!(access.session_valid(&session, now + SESSION_SECONDS - 1));
        assert!(!access.session_valid(&session, now + SESSION_SECONDS), "expired at its limit");
        assert_eq!(access.log_in(ticket(&link), now), None, "used once");
        let late = login_link("http://x", &token, now);
        assert!(
            access.log_in(ticket(&late), now + TICKET_SECONDS - 1).is_some(),
            "still good one second before"
        );
        let late = login_link("http://x", &token, now);
        assert_eq!(access.log_in(ticket(&late), now + TICKET_SECONDS), None, "expired at its limit");
    }

    #[test]
    fn forged_tickets_and_sessions_are_refused() {
        let (access, token) = access();
        let now = 1_800_000_000;
        let other = login_link("http://x", &Secret::new("b".repeat(64)), now);
        assert_eq!(access.log_in(ticket(&other), now), None, "another token's ticket");
        let far = format!("{}.00.00", now + TICKET_SECONDS + 1);
        assert_eq!(access.log_in(&far, now), None);
        for junk in ["", "1.2", "x.y.z", "99999999999999999999999.a.b"] {
            assert_eq!(access.log_in(junk, now), None, "{junk}");
        }
        let session = access.log_in(ticket(&login_link("http://x", &token, now)), now).unwrap();
        let (until, tag) = session.split_once('.').unwrap();
        let stretched = format!("{}.{tag}", until.parse::<u64>().unwrap() + 1000);
        assert!(!access.session_valid(&stretched, now), "the expiry is signed");
        assert!(!access.session_valid(&access.csrf, now), "a CSRF token is no session");
        assert!(!access.session_valid("", now));
    }

    #[test]
    fn used_tickets_are_remembered_up_to_their_limit() {
        let (access, token) = access();
        let now = 1_800_000_000;
        for _ in 0..USED_TICKETS_MAX {
            assert!(access.log_in(ticket(&login_link("http://x", &token, now)), now).is_some());
        }
        assert_eq!(
            access.log_in(ticket(&login_link("http://x", &token, now)), now),
            None,
            "one past the limit"
        );
        let later = now + TICKET_SECONDS + 1;
        assert!(
            access.log_in(ticket(&login_link("http://x", &token, later)), later).is_some(),
            "expired ones forgotten"
        );
    }

    #[test]
    fn the_csrf_token_is_per_node_and_compared_whole() {
        let (access, _) = access();
        assert!(access.csrf_matches(access.csrf()));
        assert!(!access.csrf_matches(&access.csrf()[1..]));
        assert!(!access.csrf_matches(""));
        assert_ne!(Access::new(Some(&Secret::new("c"))).csrf(), access.csrf());
    }

    #[test]
    fn debug_shows_no_key() {
        let (access, token) = access();
        let shown = format!("{access:?}");
        assert!(!shown.contains(access.csrf()) && !shown.contains(token.expose()), "{shown}");
    }

    #[test]
    fn cookies_are_found_by_name_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; ecp-session-n1=v1"));
        headers.append(header::COOKIE, HeaderValue::from_static("ecp-session-n2=v2"));
        assert_eq!(cookie(&headers, "ecp-session-n1"), Some("v1"));
        assert_eq!(cookie(&headers, "ecp-session-n2"), Some("v2"));
        assert_eq!(cookie(&headers, "ecp-session-n3"), None);
        assert_eq!(cookie_name("a<b>;c=d-1"), "ecp-session-abcd-1");
        assert_eq!(cookie_name("26DRFYN-UT6ANFQ"), "ecp-session-26drfyn-ut6anfq");
    }
}
