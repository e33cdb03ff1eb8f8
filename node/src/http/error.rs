//! [`ApiError`]: every error the HTTP API answers, as `{"error", "code"}`.
//!
//! A 4xx names the problem and the fix; a 5xx says little, and its cause
//! goes to the log. No message carries a file path or a secret.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ecp_protocol::{AuthError, DecodeError};

use crate::store::StoreError;

/// An error answer: status, stable machine code, human message.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable code, e.g. `invalid_json`.
    pub code: &'static str,
    /// What went wrong and what to do.
    pub message: String,
}

impl ApiError {
    /// Any error.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
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
        (self.status, Json(body)).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoSuchSkill(name) => {
                ApiError::new(StatusCode::NOT_FOUND, "no_such_skill", format!("no skill named {name:?}"))
            }
            StoreError::NoSuchQuarantineEntry(id) => ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_quarantine_entry",
                format!("no held quarantine entry {id}"),
            ),
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
        ApiError::internal(&e)
    }
}
