//! Errors as the Kubernetes API server gives them: a `Status` object with `reason`, `code`,
//! `details` and the message kubectl prints after `Error from server (Reason):`.

use axum::Json;
use axum::http::header::WARNING;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use flotilla_core::RejectCode;
use serde_json::{Value, json};

/// A refused request, rendered as a `Status`.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub code: StatusCode,
    /// `reason` (`NotFound`, `Conflict`, `Invalid`, …).
    pub reason: &'static str,
    /// The message kubectl prints.
    pub message: String,
    /// `details`, when the error is about one object.
    pub details: Option<Value>,
    /// `metadata` (a `continue` token for an expired one); boxed, as it is rare and the error
    /// travels in every `Result` of the API.
    pub metadata: Option<Box<Value>>,
    /// `Warning` headers to answer with (unknown fields dropped under `fieldValidation=Warn`
    /// before the object was refused for another reason, as the API server warns).
    pub warnings: Vec<String>,
}

/// What an error is about: `plural.group`, the kind and the name.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    /// `clusterresourceplacements.placement.kubernetes-fleet.io` (just the plural for core).
    pub resource: String,
    /// The plural (Kubernetes puts it in `details.kind`).
    pub plural: String,
    /// The group.
    pub group: String,
    /// The kind.
    pub kind: String,
    /// The object's name.
    pub name: String,
}

impl Subject {
    fn details(&self) -> Value {
        json!({"name": self.name, "group": self.group, "kind": self.plural})
    }
}

impl ApiError {
    fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            metadata: None,
            warnings: Vec::new(),
        }
    }

    /// 404 for a path that names no served resource.
    pub fn no_resource() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 404 for an object that does not exist.
    pub fn not_found(subject: &Subject) -> Self {
        Self {
            details: Some(subject.details()),
            ..Self::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!("{} {:?} not found", subject.resource, subject.name),
            )
        }
    }

    /// 409 for a create of an object that exists.
    pub fn already_exists(subject: &Subject) -> Self {
        Self {
            details: Some(subject.details()),
            ..Self::new(
                StatusCode::CONFLICT,
                "AlreadyExists",
                format!("{} {:?} already exists", subject.resource, subject.name),
            )
        }
    }

    /// 409 for a write made against an older `resourceVersion`.
    pub fn conflict(subject: &Subject) -> Self {
        Self::conflict_because(
            subject,
            "the object has been modified; please apply your changes to the latest version and \
             try again",
        )
    }

    /// 409 with a reason of the caller's.
    pub fn conflict_because(subject: &Subject, why: &str) -> Self {
        Self {
            details: Some(subject.details()),
            ..Self::new(
                StatusCode::CONFLICT,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} {:?}: {why}",
                    subject.resource, subject.name
                ),
            )
        }
    }

    /// 422 for an object that fails validation, naming the field.
    pub fn invalid(subject: &Subject, field: &str, message: &str) -> Self {
        let cause = if field.is_empty() {
            message.to_owned()
        } else {
            format!("{field}: Invalid value: {message}")
        };
        let causes = json!([{"reason": "FieldValueInvalid", "message": message, "field": field}]);
        Self::unprocessable(subject, causes, &cause)
    }

    /// 422 `Invalid` about `subject`: `causes` in its details, `listed` after "is invalid: ".
    fn unprocessable(subject: &Subject, causes: Value, listed: &str) -> Self {
        let mut details = subject.details();
        details["kind"] = Value::from(subject.kind.as_str());
        details["causes"] = causes;
        Self {
            details: Some(details),
            ..Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                format!(
                    "{}.{} {:?} is invalid: {listed}",
                    subject.kind, subject.group, subject.name
                ),
            )
        }
        .trim_core_group()
    }

    /// 422 for an object that breaks its schema: every violation a cause, the message as the
    /// API server's `NewInvalid` words it (one error bare, several in brackets).
    pub fn invalid_fields(
        subject: &Subject,
        violations: &[flotilla_adapters::schema::Violation],
    ) -> Self {
        let texts: Vec<String> = violations.iter().map(ToString::to_string).collect();
        let listed = match texts.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = violations
            .iter()
            .map(|v| {
                // The API server names the object itself by its nil path.
                let field = if v.field.is_empty() {
                    "<nil>"
                } else {
                    &v.field
                };
                json!({"reason": v.reason.cause(), "message": v.body(), "field": field})
            })
            .collect();
        Self::unprocessable(subject, Value::Array(causes), &listed)
    }

    /// `Kind. "name"` reads `Kind "name"` for the core group.
    fn trim_core_group(mut self) -> Self {
        self.message = self.message.replacen(". \"", " \"", 1);
        self
    }

    /// 422 for a field longer than allowed, worded as the API server's `field.TooLong` with a
    /// byte limit (`metadata.annotations: Too long: must have at most 262144 bytes`).
    pub fn too_long(subject: &Subject, field: &str, bytes_max: usize) -> Self {
        let message = format!("Too long: must have at most {bytes_max} bytes");
        let causes = json!([{"reason": "FieldValueTooLong", "message": message, "field": field}]);
        Self::unprocessable(subject, causes, &format!("{field}: {message}"))
    }

    /// 410 for a `continue` token whose point in the log can no longer be read, worded as the
    /// API server's (`storage.NewResourceExpired`); `renewed` continues from the same item at
    /// the current point.
    pub fn expired_continue(renewed: Option<String>) -> Self {
        Self {
            metadata: renewed.map(|token| Box::new(json!({"continue": token}))),
            ..Self::new(
                StatusCode::GONE,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result. \
                 You can start a new list without the continue parameter, or use the continue \
                 token in this response to retrieve the remainder of the results. Continuing \
                 with the provided token results in an inconsistent list - objects that were \
                 created, modified, or deleted between the time the first chunk was returned \
                 and now may show up in the list.",
            )
        }
    }

    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// 405 for a verb the resource does not support.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", message)
    }

    /// 415 for a patch type the server does not take.
    pub fn unsupported_media_type(content_type: &str, accepted: &str) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format ({content_type}) - accepted \
                 media types include: {accepted}"
            ),
        )
    }

    /// 413 for a body or an object larger than the hub takes, as the API server answers one
    /// over its request limit (`RequestEntityTooLarge`, `apierrors.NewRequestEntityTooLargeError`).
    pub fn too_large(message: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            format!("Request entity too large: {message}"),
        )
    }

    /// The log's refusal of a write: 413 for an object too large to store (a retry cannot
    /// succeed), 507 while the log's storage is full (a retry succeeds once space is freed),
    /// 503 for the rest (a retry may).
    pub fn refused_write(error: &crate::runtime::HubError) -> Self {
        if crate::ingest::is_too_large(error) {
            Self::too_large(error)
        } else if let Some(message) = crate::ingest::storage_full_message(error) {
            Self::insufficient_storage(message)
        } else {
            Self::unavailable(error)
        }
    }

    /// 507 when the log's storage is full: nothing was stored, and the hub takes writes again
    /// by itself once space is freed (the message says where).
    pub fn insufficient_storage(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "InsufficientStorage",
            message,
        )
    }

    /// 500 for a failure of the hub itself.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// 503 when the log refuses the write.
    pub fn unavailable(message: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            message.to_string(),
        )
    }

    /// 504 when the write was appended but not folded in time.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(StatusCode::GATEWAY_TIMEOUT, "Timeout", message)
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        if let Some(metadata) = &self.metadata {
            status["metadata"] = (**metadata).clone();
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let response = (self.code, Json(self.to_status())).into_response();
        warn(response, &self.warnings)
    }
}

/// Adds a `Warning` header per warning to a write's response (`299 - "…"`, which kubectl
/// prints as `Warning: …`).
pub fn warn(mut response: Response, warnings: &[String]) -> Response {
    for warning in warnings {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(WARNING, value);
        }
    }
    response
}

/// The API error of a write the fold rejected: `NotFound` for a missing object, otherwise
/// `Invalid` naming the field the core's message starts with.
pub(crate) fn rejection(subject: &Subject, code: RejectCode, message: &str) -> ApiError {
    match code {
        RejectCode::NotFound | RejectCode::ApprovalRequestNotFound => ApiError::not_found(subject),
        // The core's messages start with the field they are about (`spec.policy.x: …`).
        _ => match message.split_once(": ") {
            Some((field, text)) if !field.contains(' ') => ApiError::invalid(subject, field, text),
            _ => ApiError::invalid(subject, "", message),
        },
    }
}

/// The `Status` a successful delete answers with.
pub fn deleted(subject: &Subject) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": subject.details(),
    })
}
