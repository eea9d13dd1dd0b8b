//! The API's error answer, `{"error": message}` with a status code, shared by every HTTP
//! handler module (`http`, `http_replay`, `api_doc`) so none of them imports another for it.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// `{"error": message}` with `status`.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// A 500 carrying `err`'s text.
pub fn internal(err: impl std::fmt::Display) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
}
