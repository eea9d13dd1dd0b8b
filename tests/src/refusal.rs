//! What the storage-full tests (`disk_full.rs`, `stream_full.rs`) share: one HTTP request with
//! its status and body, and the `Status` a write refused for want of space is answered with.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::support::HarnessResult;

/// One request; the answer's status and body (JSON, or the text as a JSON string). `body` is
/// the content type and the JSON sent.
///
/// # Errors
/// When the hub does not answer within 30 s.
pub async fn send(
    client: &reqwest::Client,
    method: Method,
    url: String,
    body: Option<(&str, &Value)>,
) -> HarnessResult<(StatusCode, Value)> {
    let mut request = client.request(method, url).timeout(Duration::from_secs(30));
    if let Some((content_type, body)) = body {
        request = request
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body.to_string());
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, body))
}

/// Asserts the answer is 507 with a Kubernetes `Status` of reason `InsufficientStorage`, whose
/// message says the hub resumes by itself; returns the message. `what` names the request in a
/// failure.
#[must_use]
pub fn insufficient_storage(status: StatusCode, body: &Value, what: &str) -> String {
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE, "{what}: {body}");
    assert_eq!(body["kind"], "Status", "{what}: {body}");
    assert_eq!(body["apiVersion"], "v1", "{what}: {body}");
    assert_eq!(body["status"], "Failure", "{what}: {body}");
    assert_eq!(body["code"], 507, "{what}: {body}");
    assert_eq!(body["reason"], "InsufficientStorage", "{what}: {body}");
    let message = body["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        message.contains("nothing of this request was stored"),
        "{what}: {message}"
    );
    assert!(message.contains("by itself"), "{what}: {message}");
    message
}
