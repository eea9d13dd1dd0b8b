//! `GET /openapi.json`: an OpenAPI 3.1 description of flotilla's own HTTP API — the table at
//! the top of [`crate::http`], without the test-only `/v1/test/clock` and without the
//! Kubernetes API (that has its own documents at `/openapi/v2` and `/openapi/v3`).
//!
//! The operations are described on stubs here rather than on the handlers, which are generic
//! over the log; `tests/tests/openapi.rs` runs schemathesis against a hub with this document,
//! so a description that drifts from the handlers shows up as a failure there.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use utoipa::{OpenApi, ToSchema};

/// The document, built once per request (it is small).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "flotilla hub API",
        description = "flotilla's own endpoints. With `serve --tokens`, every one but \
                       `/healthz` needs `Authorization: Bearer TOKEN` (401 without a known \
                       token, 403 when its role may not).",
    ),
    paths(
        healthz, status, events, kinds, objects, table, describe, log, log_export, timeline,
        explain, summary, members, runs, marks, metrics
    ),
    components(schemas(ErrorBody, StatusBody, LogPage))
)]
pub struct ApiDoc;

/// `GET /openapi.json`.
pub async fn openapi_json() -> Response {
    match serde_json::to_value(ApiDoc::openapi()) {
        Ok(document) => Json(document).into_response(),
        Err(error) => flotilla_adapters::api_error::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        ),
    }
}

/// An error answer.
#[derive(ToSchema)]
#[allow(dead_code)] // described, not built: the handlers answer with `json!`
struct ErrorBody {
    /// What was wrong.
    error: String,
}

/// `GET /v1/status`'s answer.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // described, not built
struct StatusBody {
    /// The last folded input sequence.
    seq: u64,
    /// The log's last sequence.
    log_seq: u64,
    /// The folded state's hash.
    state_hash: String,
    /// The folded state's time (the last input's), if any.
    now: Option<String>,
    /// How many member clusters the state holds.
    member_clusters: u64,
    /// Why this hub lost the writer role, if it did.
    fenced: Option<String>,
    /// Why this hub declined the writer role, if it did.
    declined: Option<String>,
    /// Whether this hub follows another writer.
    following: bool,
}

/// `GET /v1/log`'s answer.
#[derive(ToSchema)]
#[allow(dead_code)] // described, not built
struct LogPage {
    /// Input records: `{seq, event}`, `{seq, rejected}` or `{seq, newer}`.
    events: Vec<Value>,
    /// `{seq, decisions}` of the inputs that decided something.
    decisions: Vec<Value>,
}

// The stubs below only carry the operations' descriptions.

#[utoipa::path(get, path = "/healthz", responses(
    (status = 200, description = "The hub is up", body = String, content_type = "text/plain"),
))]
#[allow(dead_code)]
fn healthz() {}

#[utoipa::path(get, path = "/v1/status", responses(
    (status = 200, description = "Folded sequence, state hash, writer state", body = StatusBody),
    (status = 500, description = "The log cannot be read", body = ErrorBody),
))]
#[allow(dead_code)]
fn status() {}

#[utoipa::path(post, path = "/v1/events",
    params(("wait" = Option<bool>, Query, description = "Answer after the events are folded, with their decisions")),
    request_body(content = Value, content_type = "application/json",
        description = "One JSON event or an array of them (schema: `flotilla schema`)",
        example = json!({"schemaVersion": 1, "type": "heartbeat", "cluster": "member1"})),
    responses(
        (status = 200, description = "Per event: its sequence, or why it was refused; with `wait`, its decisions", body = Value),
        (status = 400, description = "The body is not events", body = ErrorBody),
        (status = 503, description = "The log refused the append", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn events() {}

#[utoipa::path(get, path = "/v1/kinds",
    params(
        ("kind" = String, Query, description = "A kind name, plural, short name or `kind.group`", example = "crp"),
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time): answer from the state there", example = "3"),
    ),
    responses(
        (status = 200, description = "kind, group, namespaced, plural, version", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
        (status = 404, description = "No such kind", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn kinds() {}

#[utoipa::path(get, path = "/v1/objects/{kind}",
    params(
        ("kind" = String, Path, description = "A kind name", example = "crp"),
        ("namespace" = Option<String>, Query, description = "Only this namespace"),
        ("name" = Option<String>, Query, description = "Only the object of this name"),
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
    ),
    responses(
        (status = 200, description = "The objects (or the named one) in KubeFleet's shape", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
        (status = 404, description = "No such kind or object", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn objects() {}

#[utoipa::path(get, path = "/v1/table/{kind}",
    params(
        ("kind" = String, Path, description = "A kind name", example = "crp"),
        ("namespace" = Option<String>, Query, description = "Only this namespace"),
        ("name" = Option<String>, Query, description = "Only the object of this name"),
        ("wide" = Option<bool>, Query, description = "More columns, as `get -o wide`"),
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
    ),
    responses(
        (status = 200, description = "`get`-style table", body = String, content_type = "text/plain"),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
        (status = 404, description = "No such kind or object", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn table() {}

#[utoipa::path(get, path = "/v1/describe/{kind}/{name}",
    params(
        ("kind" = String, Path, description = "A kind name", example = "crp"),
        ("name" = String, Path, description = "The object's name", example = "example-placement"),
        ("namespace" = Option<String>, Query, description = "Its namespace (`default` for a namespaced kind)"),
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
    ),
    responses(
        (status = 200, description = "`describe`-style text", body = String, content_type = "text/plain"),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
        (status = 404, description = "No such kind or object", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn describe() {}

#[utoipa::path(get, path = "/v1/log",
    params(
        ("from" = Option<u64>, Query, description = "First sequence (default 1)"),
        ("max" = Option<u64>, Query, description = "Most records (default and cap 1000)"),
    ),
    responses(
        (status = 200, description = "Input records and their decisions", body = LogPage),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn log() {}

#[utoipa::path(get, path = "/v1/log/export",
    responses(
        (status = 200, description = "The log and its decisions as `flotilla replay export` writes them: JSON lines (docs/replay.md)",
            body = String, content_type = "application/x-ndjson"),
    ))]
#[allow(dead_code)]
fn log_export() {}

#[utoipa::path(get, path = "/v1/timeline",
    params(
        ("placement" = Option<String>, Query, description = "Inputs and decisions about this placement"),
        ("cluster" = Option<String>, Query, description = "… about this member cluster"),
        ("run" = Option<String>, Query, description = "… about this staged update run"),
        ("namespace" = Option<String>, Query, description = "The namespace of `placement` and `run`"),
        ("after" = Option<String>, Query, description = "From after this point (`SEQ` or an RFC 3339 time)"),
        ("until" = Option<String>, Query, description = "Up to this point"),
    ),
    responses(
        (status = 200, description = "`replay timeline` as JSON", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn timeline() {}

#[utoipa::path(get, path = "/v1/explain",
    params(
        ("placement" = String, Query, description = "The placement", example = "example-placement"),
        ("cluster" = Option<String>, Query, description = "Why this cluster has its version (else: why the rollout waits)"),
        ("namespace" = Option<String>, Query, description = "The placement's namespace"),
        ("at" = Option<String>, Query, description = "At this point (`SEQ` or an RFC 3339 time)"),
    ),
    responses(
        (status = 200, description = "`replay explain` as JSON", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
        (status = 404, description = "No such placement", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn explain() {}

#[utoipa::path(get, path = "/v1/summary",
    params(
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
    ),
    responses(
        (status = 200, description = "seq, time, member health counts, placements with binding counts, runs not done (progress, stage, why their placement waits), pending approvals; lists capped at 100 with their totals", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn summary() {}

#[utoipa::path(get, path = "/v1/members",
    params(
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
        ("offset" = Option<u64>, Query, description = "Matching members skipped, in name order (default 0)"),
        ("limit" = Option<u64>, Query, description = "Most members answered (default 100, cap 500)"),
        ("health" = Option<String>, Query, description = "Only `Healthy`, `Unhealthy`, `Unknown` or `Leaving` members"),
        ("q" = Option<String>, Query, description = "Only members whose name contains this text"),
    ),
    responses(
        (status = 200, description = "seq, time, total matching, offset, and items `{health, object}` (the `MemberCluster` in KubeFleet's shape)", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn members() {}

#[utoipa::path(get, path = "/v1/runs",
    params(
        ("at" = Option<String>, Query, description = "A point of the log (`SEQ` or an RFC 3339 time)", example = "3"),
        ("clusters" = Option<u64>, Query, description = "Clusters kept per stage (default 20, cap 500); `clustersOmitted` counts the rest"),
    ),
    responses(
        (status = 200, description = "`{seq, items}`: every `ClusterStagedUpdateRun` and `StagedUpdateRun` in KubeFleet's shape, stages cut short", body = Value),
        (status = 400, description = "A query parameter is malformed", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn runs() {}

#[utoipa::path(get, path = "/v1/marks", responses(
    (status = 200, description = "`{marks: [{seq, time, kind, label}]}`, newest first, at most 200: runs started, succeeded (`run`) or failed (`failure`), approvals requested and given (`approval`)", body = Value),
))]
#[allow(dead_code)]
fn marks() {}

#[utoipa::path(get, path = "/metrics", responses(
    (status = 200, description = "Prometheus text format (docs/observability.md)", body = String,
        content_type = "text/plain"),
))]
#[allow(dead_code)]
fn metrics() {}
