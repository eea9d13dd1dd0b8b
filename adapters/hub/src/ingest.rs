//! Ingest of JSON events from outside (HTTP `POST /v1/events`, NATS `flotilla.ingest`): parse
//! and check every event against the published JSON form first — one malformed event refuses
//! the whole request and nothing is appended — then append, optionally wait for the fold, and
//! answer with each event's sequence and decisions.

use std::time::Duration;

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Principal};
use flotilla_eventstore::{EventLog, LogError};
use serde_json::Value;
use uuid::Uuid;

use crate::runtime::{Hub, HubError};
use flotilla_adapters::json_event::{AppendResult, JsonDefaults, JsonEnvelope};

/// How long a waiting append waits for the fold.
pub const FOLD_WAIT: Duration = Duration::from_secs(10);
/// Most events one request may carry.
pub const EVENTS_PER_REQUEST_MAX: usize = 10_000;

/// Why a request was refused.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The request is malformed; nothing was appended.
    #[error("{0}")]
    BadRequest(String),
    /// An event is larger than the log stores (`LogError::TooLarge`); nothing was appended,
    /// and a retry of the same request is refused the same way.
    #[error("{0}")]
    TooLarge(String),
    /// The log's storage is full ([`LogError::StorageFull`], [`LogError::StreamFull`]); nothing
    /// was appended, and a retry succeeds once space is freed. The message says where and what to do
    /// ([`storage_full_message`]).
    #[error("{0}")]
    StorageFull(String),
    /// The log failed the append; a retry may succeed.
    #[error("{0}")]
    Unavailable(String),
}

/// Whether the log refused an event too large to store: such a request answers 413, not 503,
/// since a retry cannot succeed.
#[must_use]
pub fn is_too_large(error: &HubError) -> bool {
    matches!(error, HubError::Log(LogError::TooLarge { .. }))
}

/// What a write refused for a full storage is answered with (HTTP 507, as a Kubernetes
/// `Status`): where (the data directory, or the stream on NATS), that nothing was stored, and
/// what to do; `None` for any other error.
#[must_use]
pub fn storage_full_message(error: &HubError) -> Option<String> {
    const AFTER: &str = "the hub takes writes again by itself, without a restart, and this \
                         request can then be sent again";
    match error {
        HubError::Log(LogError::StorageFull { dir, detail }) => {
            let dir = dir.display();
            Some(format!(
                "the hub's data directory {dir} is full: nothing of this request was stored. \
                 Free space in {dir}; {AFTER} ({detail})"
            ))
        }
        HubError::Log(LogError::StreamFull { stream, detail }) => Some(format!(
            "the log's stream {stream} on NATS is full: nothing of this request was stored. \
             Raise the stream's limits (max_bytes, max_msgs) or free JetStream storage on the \
             NATS server; {AFTER} ({detail})"
        )),
        _ => None,
    }
}

impl From<HubError> for IngestError {
    fn from(error: HubError) -> Self {
        if is_too_large(&error) {
            Self::TooLarge(error.to_string())
        } else if let Some(message) = storage_full_message(&error) {
            Self::StorageFull(message)
        } else {
            Self::Unavailable(error.to_string())
        }
    }
}

/// Parses one JSON event or an array of them, appends them, and reports the outcome.
///
/// # Errors
/// [`IngestError::BadRequest`] for malformed input, [`IngestError::TooLarge`] for an event
/// the log cannot store, [`IngestError::StorageFull`] while the log's storage is full (nothing
/// appended in any of these); [`IngestError::Unavailable`] when the log fails.
pub async fn submit_json<L: EventLog>(
    hub: &Hub<L>,
    body: &[u8],
    source: &str,
    wait: bool,
) -> Result<Vec<AppendResult>, IngestError> {
    submit_json_as(hub, body, source, &Principal::Hub, wait).await
}

/// [`submit_json`] on behalf of `principal`, whom the caller authenticated (the HTTP API's
/// token, `Principal::Local` on an open loopback hub): every appended event records it.
///
/// # Errors
/// As [`submit_json`].
pub async fn submit_json_as<L: EventLog>(
    hub: &Hub<L>,
    body: &[u8],
    source: &str,
    principal: &Principal,
    wait: bool,
) -> Result<Vec<AppendResult>, IngestError> {
    // The time is a placeholder: the log assigns it at append. A `time` the publisher gives is
    // kept as the event's claimed time.
    let envelopes = parse_request_as(body, source, principal, Utc::now())?;
    let ids: Vec<_> = envelopes.iter().map(|e| e.id).collect();
    let appended = hub.submit(envelopes).await.map_err(IngestError::from)?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    let folded = wait && hub.wait_folded(last, FOLD_WAIT).await;
    let view = hub.view().ok().filter(|_| folded);
    Ok(ids
        .into_iter()
        .zip(appended)
        .map(|(id, outcome)| AppendResult {
            id,
            seq: outcome.seq,
            duplicate: outcome.duplicate,
            decisions: view
                .as_ref()
                .and_then(|v| v.decisions_for(outcome.seq))
                .and_then(|d| serde_json::to_value(d).ok()),
        })
        .collect())
}

/// Parses a request body — one JSON event or an array of them — into the events to append,
/// every one checked against the JSON form: the first malformed one refuses the whole request.
/// `now` is each event's time until the log assigns its own; an event without an id gets a
/// fresh one.
///
/// # Errors
/// [`IngestError::BadRequest`] naming the event (by index) and what is wrong with it.
pub fn parse_request(
    body: &[u8],
    source: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Envelope>, IngestError> {
    parse_request_as(body, source, &Principal::Hub, now)
}

/// Why the manifest of an `apply` event breaks its KubeFleet CRD schema, under strict field
/// validation as `kubectl apply` and `flotilla apply` default to (`flotilla_adapters::schema`); `None` for
/// other events and for manifests that pass.
fn manifest_problems(event: &Value) -> Option<String> {
    if event.get("type").and_then(Value::as_str) != Some("apply") {
        return None;
    }
    let manifest = event.get("manifest")?;
    let problems = flotilla_adapters::schema::strict_problems(manifest);
    if problems.is_empty() {
        return None;
    }
    let kind = manifest["kind"].as_str().unwrap_or_default();
    let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
    Some(format!(
        "the manifest of {kind} {name:?} breaks KubeFleet's schema: {}",
        problems.join("; ")
    ))
}

/// [`parse_request`] on behalf of `principal`. An event that names a `principal` itself is
/// refused: who sent it is what the hub authenticated, never what the body says.
///
/// # Errors
/// As [`parse_request`].
pub fn parse_request_as(
    body: &[u8],
    source: &str,
    principal: &Principal,
    now: DateTime<Utc>,
) -> Result<Vec<Envelope>, IngestError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| IngestError::BadRequest(format!("body is not JSON: {e}")))?;
    let items = match value {
        Value::Array(items) => items,
        single => vec![single],
    };
    if items.len() > EVENTS_PER_REQUEST_MAX {
        return Err(IngestError::BadRequest(format!(
            "{} events in one request; at most {EVENTS_PER_REQUEST_MAX}",
            items.len()
        )));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let defaults = JsonDefaults {
                id: Uuid::now_v7(),
                time: now,
                source,
            };
            if item.get("principal").is_some() {
                return Err(IngestError::BadRequest(format!(
                    "event {index}: `principal` is set by the hub from the credentials the \
                     request was made with, never by the body; remove it"
                )));
            }
            if let Some(unknown) = flotilla_core::wire::json_fields::unknown_field(&item) {
                return Err(IngestError::BadRequest(format!("event {index}: {unknown}")));
            }
            if let Some(problems) = manifest_problems(&item) {
                return Err(IngestError::BadRequest(format!(
                    "event {index}: {problems}"
                )));
            }
            let envelope = serde_json::from_value::<JsonEnvelope>(item)
                .map(|event| {
                    event
                        .into_envelope(&defaults)
                        .with_principal(principal.clone())
                })
                .map_err(|e| IngestError::BadRequest(format!("event {index}: {e}")))?;
            // Ids of that form are the log's own, given to records published to NATS without
            // one: a publisher that chose one could take another record's id.
            if flotilla_core::wire::json::is_stream_record_id(&envelope.id) {
                return Err(IngestError::BadRequest(format!(
                    "event {index}: id {} has the form the log gives records published without \
                     an id; choose another (a UUID v7, say)",
                    envelope.id
                )));
            }
            Ok(envelope)
        })
        .collect()
}
