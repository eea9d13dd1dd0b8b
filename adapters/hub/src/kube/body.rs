//! Reading a request's body as the API server does: at most [`REQUEST_BYTES_MAX`], a larger
//! one answered `413 RequestEntityTooLarge` with a `Status`; protobuf turned into JSON.
//!
//! A body over the limit is still read to its end (up to [`DRAIN_BYTES_MAX`]) before the answer
//! is sent: a client still writing when the server closes the connection sees `broken pipe`
//! instead of the `Status` (what kubectl printed for a 5 MB ConfigMap).

use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue};
use http_body_util::BodyExt;

use super::protobuf;
use super::status::ApiError;

/// Largest request body: the API server's limit for a JSON or protobuf request
/// (`apiserver.Config.MaxRequestBodyBytes`, 3 MiB).
pub const REQUEST_BYTES_MAX: usize = 3 * 1024 * 1024;

/// Most bytes of an oversized body read and discarded before answering 413; past it the
/// connection is closed.
pub const DRAIN_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Reads the body whole, within [`REQUEST_BYTES_MAX`].
///
/// # Errors
/// 413 over the limit; 400 when the body cannot be read.
pub async fn read(body: Body) -> Result<Bytes, ApiError> {
    let mut body = body;
    let mut kept: Vec<u8> = Vec::new();
    let mut seen_bytes = 0_usize;
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| ApiError::bad_request(format!("cannot read the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen_bytes = seen_bytes.saturating_add(data.len());
        if seen_bytes <= REQUEST_BYTES_MAX {
            kept.extend_from_slice(&data);
        } else if seen_bytes > DRAIN_BYTES_MAX {
            break;
        }
    }
    if seen_bytes > REQUEST_BYTES_MAX {
        return Err(ApiError::too_large(format!("limit is {REQUEST_BYTES_MAX}")));
    }
    Ok(Bytes::from(kept))
}

/// A protobuf body as JSON (its `Content-Type` rewritten to match); any other body as it is.
///
/// # Errors
/// 400 for a protobuf body that cannot be decoded.
pub fn as_json(headers: &mut HeaderMap, body: Bytes) -> Result<Bytes, ApiError> {
    let is_protobuf = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(protobuf::is_protobuf);
    if !is_protobuf {
        return Ok(body);
    }
    let object = protobuf::to_json(&body)?;
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(Bytes::from(object.to_string()))
}
