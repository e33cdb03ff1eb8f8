//! The page's buttons: thin form endpoints over the `/v1/` actions. Each
//! checks the form's CSRF token, calls the `/v1/` handler that does the
//! same thing for the API (so both answer alike, audit alike and fail
//! alike), and sends the browser back to the page (303): reloading the
//! page never repeats an action.

use axum::body::Bytes;
use axum::extract::rejection::{FormRejection, PathRejection};
use axum::extract::{Form, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::super::error::ApiError;
use super::super::state::AppState;
use super::super::v1;

/// The largest form body taken, bytes (the CSRF token and a flag).
pub const FORM_BYTES: usize = 1024;

/// What every button sends.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ActionForm {
    /// The page's CSRF token.
    csrf: String,
    /// For approve: install even though the scan flagged it.
    #[serde(default)]
    force: bool,
}

type Id = Result<Path<i64>, PathRejection>;

/// `POST /ui/quarantine/{id}/approve`: `POST /v1/quarantine/{id}/approve`.
pub(super) async fn approve(
    state: State<AppState>,
    id: Id,
    form: Result<Form<ActionForm>, FormRejection>,
) -> Response {
    let result = async {
        let form = checked(&state, form)?;
        let body = if form.force { r#"{"force": true}"# } else { "" };
        v1::approve(state, id, Bytes::from_static(body.as_bytes())).await
    };
    back_to(result.await, "quarantine")
}

/// `POST /ui/quarantine/{id}/drop`: `DELETE /v1/quarantine/{id}`.
pub(super) async fn drop_entry(
    state: State<AppState>,
    id: Id,
    form: Result<Form<ActionForm>, FormRejection>,
) -> Response {
    let result = async {
        checked(&state, form)?;
        v1::drop_entry(state, id).await
    };
    back_to(result.await, "quarantine")
}

/// `POST /ui/inbox/{id}/accept`: `POST /v1/inbox/{id}/accept`.
pub(super) async fn accept(
    state: State<AppState>,
    id: Id,
    form: Result<Form<ActionForm>, FormRejection>,
) -> Response {
    let result = async {
        checked(&state, form)?;
        v1::inbox_accept(state, id).await
    };
    back_to(result.await, "inbox")
}

/// `POST /ui/inbox/{id}/reject`: `POST /v1/inbox/{id}/reject`.
pub(super) async fn reject(
    state: State<AppState>,
    id: Id,
    form: Result<Form<ActionForm>, FormRejection>,
) -> Response {
    let result = async {
        checked(&state, form)?;
        v1::inbox_reject(state, id).await
    };
    back_to(result.await, "inbox")
}

/// The form, when it parses and carries this node's CSRF token.
fn checked(state: &AppState, form: Result<Form<ActionForm>, FormRejection>) -> Result<ActionForm, ApiError> {
    let Form(form) = form.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("a form is at most {FORM_BYTES} bytes"),
            );
        }
        ApiError::bad_request(
            "invalid_form",
            "send the form the status page shows: application/x-www-form-urlencoded with csrf (and force=true to \
             approve a flagged entry)",
        )
    })?;
    if !state.status_page.csrf_matches(&form.csrf) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "csrf_token_invalid",
            "the form's CSRF token is not this node's: reload the status page and press the button again",
        ));
    }
    Ok(form)
}

/// 303 to the page's `section` when the action was done; its error otherwise.
fn back_to<T>(result: Result<T, ApiError>, section: &'static str) -> Response {
    match result {
        Ok(_) => {
            let location = HeaderValue::from_str(&format!("/#{section}")).expect("ASCII");
            (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
        }
        Err(e) => e.into_response(),
    }
}
