//! [`ApiError`]: every error the HTTP API answers, as `{"error", "code"}`,
//! with `Retry-After` when waiting helps (429, 503).
//!
//! A 4xx names the problem and the fix; a 5xx says little, and its cause
//! goes to the log. No message carries a file path or a secret.

use axum::Json;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ecp_protocol::{AuthError, DecodeError};

use crate::store::StoreError;
use crate::store::hub::Fault;

/// An error answer: status, stable machine code, human message.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable code, e.g. `invalid_json`.
    pub code: &'static str,
    /// What went wrong and what to do.
    pub message: String,
    /// Seconds after which a retry may succeed: sent as `Retry-After`.
    pub retry_after: Option<u64>,
    /// Other headers the answer carries (`WWW-Authenticate`); a list, not
    /// a map, to keep errors small.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    /// Any error.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), retry_after: None, headers: Vec::new() }
    }

    /// 429 with a code, telling the client to wait `seconds` (at least 1).
    pub fn too_many_requests(code: &'static str, message: impl Into<String>, seconds: u64) -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, code, message).with_retry_after(seconds)
    }

    /// The same error with `Retry-After: seconds` (at least 1).
    #[must_use]
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds.max(1));
        self
    }

    /// The same error, answered with the header `name: value` too.
    #[must_use]
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// 400 with a code.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 404 for a path the node does not serve.
    pub fn unknown_path(path: &str) -> Self {
        let shown: String = path.chars().take(100).collect();
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such endpoint: {shown}; see GET /ecp/manifest"),
        )
    }

    /// 500 whose cause is logged, not shown.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the node's log has the cause",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "code": self.code });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoSuchSkill(name) => {
                ApiError::new(StatusCode::NOT_FOUND, "no_such_skill", format!("no skill named {name:?}"))
            }
            e @ StoreError::NotLocal(_) => ApiError::new(StatusCode::CONFLICT, "not_local", e.to_string()),
            StoreError::NoSuchQuarantineEntry(id) => ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_quarantine_entry",
                format!("no held quarantine entry {id}"),
            ),
            StoreError::NoSuchInboxEntry(id) => ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_inbox_entry",
                format!("no pending inbox entry {id}; GET /v1/inbox lists the waiting ones"),
            ),
            StoreError::NoSuchDeletion(id) => ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_deletion",
                format!("no held deletion {id}; GET /v1/deletions lists the held ones"),
            ),
            e @ StoreError::NeedsForce { .. } => ApiError::new(
                StatusCode::CONFLICT,
                "needs_force",
                format!("{e}; here: POST with {{\"force\": true}}"),
            ),
            e @ StoreError::QuarantineEntryNotHeld { .. } => {
                ApiError::new(StatusCode::CONFLICT, "quarantine_entry_not_held", e.to_string())
            }
            e @ StoreError::CannotApprove(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "cannot_approve", e.to_string())
            }
            StoreError::OriginLimited(limited) => {
                tracing::warn!(error = %limited, "update refused: an origin is over its limit of new skills");
                ApiError::too_many_requests("origin_rate_limited", limited.to_string(), limited.retry_after())
            }
            // A hub's database, its errors sorted by SQLSTATE (review H8):
            // only what may pass is answered "retry".
            StoreError::Postgres(e) => match crate::store::hub::fault(&e) {
                Fault::Retry => {
                    tracing::warn!(error = %e, "the hub's database failed a request; the client may retry");
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "store_unavailable",
                        "the hub's database did not answer in time; retry in a few seconds",
                    )
                    .with_retry_after(5)
                }
                Fault::Input => {
                    let (state, cause) = e
                        .as_db_error()
                        .map_or(("22000", e.to_string()), |db| (db.code().code(), db.message().to_owned()));
                    tracing::info!(sqlstate = state, error = %cause, "the hub's database refused a value of a request");
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "store_refused_value",
                        format!(
                            "the hub's database refused a value of this request (SQLSTATE {state}: {cause}); \
                             sending it again fails the same way: change the value"
                        ),
                    )
                }
                Fault::Internal => ApiError::internal(&e),
            },
            other => ApiError::internal(&other),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        let code = match e {
            AuthError::MissingSignature => "missing_signature",
            AuthError::MalformedSignature => "malformed_signature",
            _ => "bad_signature",
        };
        ApiError::new(StatusCode::FORBIDDEN, code, e.to_string())
    }
}

impl From<DecodeError> for ApiError {
    fn from(e: DecodeError) -> Self {
        ApiError::bad_request("invalid_json", format!("body is not a valid ECPKnowledgeUpdate: {e}"))
    }
}

impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> Self {
        ApiError::internal(&crate::joined::described(&e))
    }
}
