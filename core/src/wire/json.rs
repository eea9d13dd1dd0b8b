//! The JSON form of input events, for external publishers: HTTP `POST /v1/events`, NATS
//! request/reply on `flotilla.ingest`, a plain publish onto `flotilla.in.*` of the input stream,
//! and the JSON lines of `flotilla events -o json`. Its JSON Schema is what `flotilla schema`
//! prints (feature `json-schema`).
//!
//! It lives in core so that every path that accepts it parses and checks it the same way; the
//! stored form is bincode ([`crate::codec`]). Field names are frozen once shipped: add optional
//! fields, never rename. What a publisher says about time is a claim
//! ([`Envelope::claimed_time`]); the event's time is the log's.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::json_principal::JsonPrincipal;
use super::json_property::{self, JsonPropertyValue};
pub use super::json_report::{
    JsonDiffedManifest, JsonDriftedManifest, JsonManifestCondition, JsonManifestFailure,
    JsonPatchDetail,
};
use crate::event::{
    AnalysisResult, Differences, Envelope, Heartbeat, Input, ManifestFailure, ObjectRef,
    RESOURCE_INDEX_CURRENT, ResourceUsage, SCHEMA_VERSION, WorkReport,
};
use crate::principal::Principal;

/// What the JSON form leaves to the receiver: the id when it has none, the log's time, and the
/// source when it names none.
#[derive(Debug, Clone, Copy)]
pub struct JsonDefaults<'a> {
    /// The id of an event published without one.
    pub id: Uuid,
    /// The event's time: the log's (the hub's clock, or the JetStream timestamp).
    pub time: DateTime<Utc>,
    /// The source of an event that names none.
    pub source: &'a str,
}

/// The id of a JSON record published onto the input stream without one: derived from its
/// stream sequence, so that reading the record twice gives the same event.
#[must_use]
pub fn stream_record_id(seq: u64) -> Uuid {
    let mut bytes = [0_u8; 16];
    bytes[..8].copy_from_slice(b"flotilla");
    bytes[8..].copy_from_slice(&seq.to_be_bytes());
    Uuid::new_v8(bytes)
}

/// Whether `id` has the form of [`stream_record_id`]: ids of that form belong to the log, and
/// an input that carries one of its own is refused, so that no publisher can take the id a
/// record published later without one is given (and have it judged a duplicate).
#[must_use]
pub fn is_stream_record_id(id: &Uuid) -> bool {
    id.as_bytes()[..8] == stream_record_id(0).as_bytes()[..8]
}

/// Parses one JSON event (not an array) as it sits in a stored record.
///
/// # Errors
/// A message naming what is wrong (path and reason) when it is not the JSON form.
pub fn parse_event(bytes: &[u8], defaults: &JsonDefaults<'_>) -> Result<Envelope, String> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let parsed: JsonEnvelope = serde_path_to_error::deserialize(&mut reader)
        .map_err(|error| format!("not the JSON form of an event: {error}"))?;
    reader
        .end()
        .map_err(|error| format!("not the JSON form of an event: {error}"))?;
    // Parsed again as a plain value only to name a field the form does not define (serde
    // cannot refuse one through `flatten`; see `json_fields`).
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|error| format!("not the JSON form of an event: {error}"))?;
    if let Some(unknown) = super::json_fields::unknown_field(&value) {
        return Err(format!("not the JSON form of an event: {unknown}"));
    }
    Ok(parsed.into_envelope(defaults))
}

/// One input event as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct JsonEnvelope {
    /// Event id; publishers that retry must reuse it (the hub folds an id once). Assigned
    /// when absent (from the stream sequence for a record published onto the input stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// Submitted: what the publisher claims about when it happened (RFC 3339), kept as the
    /// event's claimed time and never used as the hub's clock. Listed: the time the log
    /// assigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<DateTime<Utc>>,
    /// Listed only: what the publisher claimed. Ignored when submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_time: Option<DateTime<Utc>>,
    /// Who publishes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Schema version of this event (the current one when absent).
    #[serde(default = "current_version")]
    pub schema_version: u16,
    /// Listed only: who the event came from, as the hub authenticated it (schema version 6).
    /// Never taken from a publisher (`POST /v1/events` and the input stream refuse it), so the
    /// publishers' JSON Schema does not offer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "json-schema", schemars(skip))]
    pub principal: Option<JsonPrincipal>,
    /// The event itself.
    #[serde(flatten)]
    pub event: JsonInput,
}

fn current_version() -> u16 {
    SCHEMA_VERSION
}

/// The event kinds, tagged by `type`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum JsonInput {
    /// An object applied: any manifest with apiVersion, kind and metadata.name.
    Apply {
        /// The manifest.
        manifest: serde_json::Value,
    },
    /// An object deleted.
    #[serde(rename_all = "camelCase")]
    Delete {
        /// Kind, e.g. `ClusterResourcePlacement`.
        kind: String,
        /// API group; inferred for fleet kinds when omitted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
        /// Namespace of a namespaced object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// Name.
        name: String,
    },
    /// A member agent heartbeat.
    #[serde(rename_all = "camelCase")]
    Heartbeat {
        /// Member cluster name.
        cluster: String,
        /// Non-resource properties: a bare quantity (`"kubernetes-fleet.io/node-count": "3"`)
        /// or KubeFleet's `{"value": "3", "observationTime": …}`.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        properties: BTreeMap<String, JsonPropertyValue>,
        /// Resource usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_usage: Option<JsonResourceUsage>,
    },
    /// A member's report on one placement's work.
    #[serde(rename_all = "camelCase")]
    Report {
        /// Member cluster name.
        cluster: String,
        /// Placement name.
        placement: String,
        /// Namespace of a ResourcePlacement.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// Resource snapshot index reported on; absent: the work the cluster carries now
        /// (its binding's resource index when the hub folds the report).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_index: Option<u64>,
        /// Applied (`true`), failed (`false`), or not yet (absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        applied: Option<bool>,
        /// Available, not available, or unknown (absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        available: Option<bool>,
        /// `false` when availability cannot be tracked.
        #[serde(default = "yes")]
        trackable: bool,
        /// Detail.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        message: String,
        /// The manifests that failed to apply or are not available, with why (schema 2).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        failed_manifests: Vec<JsonManifestFailure>,
        /// Set by a member whose apply strategy is `ReportDiff`: `true` when the diff of every
        /// manifest was computed, `false` when some failed (listed in `failedManifests`);
        /// absent otherwise (schema 4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff_reported: Option<bool>,
        /// Manifests whose object on the member differs from the hub's (schema 4).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        diffed_manifests: Vec<JsonDiffedManifest>,
        /// Manifests whose object drifted on the member (schema 4).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        drifted_manifests: Vec<JsonDriftedManifest>,
    },
    /// An approval of an approval request.
    Approve {
        /// Request name.
        name: String,
        /// Namespace of an `ApprovalRequest`; absent for a `ClusterApprovalRequest`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// The `Approved` condition's reason (absent: `approved`; schema 7).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The condition's message, such as `lgtm` (absent: `approved`; schema 7).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Time passes.
    Tick,
    /// A leaving member's agent removed everything it placed and left (schema 4).
    Leave {
        /// Member cluster name.
        cluster: String,
    },
    /// One measurement of an update run's Analysis task (schema 5).
    #[serde(rename_all = "camelCase")]
    AnalysisResult {
        /// The update run.
        run: String,
        /// Namespace of a `StagedUpdateRun`; absent for a `ClusterStagedUpdateRun`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// The stage's name.
        stage: String,
        /// Which task (`afterStageTasks[1]`, `after`, …); absent: the Analysis task the stage
        /// is waiting on.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        task: String,
        /// The measured value: a number, or its text as Prometheus writes it (`"NaN"`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<JsonNumber>,
        /// Why the measurement could not be taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// A measured value: JSON numbers and strings are both taken; stored as text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum JsonNumber {
    /// A JSON number.
    Number(serde_json::Number),
    /// Text, e.g. `"0.004"` or `"NaN"`.
    Text(String),
}

impl JsonNumber {
    /// The value as text.
    #[must_use]
    pub fn into_text(self) -> String {
        match self {
            JsonNumber::Number(n) => n.to_string(),
            JsonNumber::Text(text) => text,
        }
    }
}

fn yes() -> bool {
    true
}

/// Resource usage as JSON: resource name → quantity, per kind of capacity.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct JsonResourceUsage {
    /// Installed capacity.
    #[serde(default)]
    pub capacity: BTreeMap<String, String>,
    /// Allocatable capacity.
    #[serde(default)]
    pub allocatable: BTreeMap<String, String>,
    /// Free capacity.
    #[serde(default)]
    pub available: BTreeMap<String, String>,
}

impl JsonEnvelope {
    /// Converts a submitted event to the stored form: the time is the log's
    /// (`defaults.time`), and `time` becomes the claimed time.
    #[must_use]
    pub fn into_envelope(self, defaults: &JsonDefaults<'_>) -> Envelope {
        let claimed_time = self.time;
        let mut envelope = self.into_logged_envelope(defaults);
        envelope.time = defaults.time;
        envelope.claimed_time = claimed_time;
        // A publisher does not say who it is: whoever appends the event sets the principal.
        envelope.principal = Principal::Unrecorded;
        envelope
    }

    /// Converts a listed event (`flotilla events -o json`) back: `time` is the log's and
    /// `claimedTime` the claim.
    #[must_use]
    pub fn into_logged_envelope(self, defaults: &JsonDefaults<'_>) -> Envelope {
        let payload = self.event.into_input();
        Envelope {
            id: self.id.unwrap_or(defaults.id),
            time: self.time.unwrap_or(defaults.time),
            claimed_time: self.claimed_time,
            source: self.source.unwrap_or_else(|| defaults.source.to_owned()),
            schema_version: self.schema_version,
            payload,
            principal: self
                .principal
                .map_or(Principal::Unrecorded, JsonPrincipal::into_principal),
        }
    }

    /// The JSON form of a stored event.
    #[must_use]
    pub fn from_envelope(envelope: &Envelope) -> Self {
        Self {
            id: Some(envelope.id),
            time: Some(envelope.time),
            claimed_time: envelope.claimed_time,
            source: Some(envelope.source.clone()),
            schema_version: envelope.schema_version,
            principal: Some(JsonPrincipal::from_principal(&envelope.principal)),
            event: JsonInput::from_input(&envelope.payload),
        }
    }
}

/// A heartbeat as a member's JSON gives it.
fn heartbeat(
    cluster: String,
    properties: BTreeMap<String, JsonPropertyValue>,
    resource_usage: Option<JsonResourceUsage>,
) -> Heartbeat {
    Heartbeat {
        cluster,
        properties: json_property::into_values(properties).into(),
        resource_usage: resource_usage.map(|u| ResourceUsage {
            capacity: u.capacity.into(),
            allocatable: u.allocatable.into(),
            available: u.available.into(),
        }),
    }
}

/// A work report's diffed and drifted manifests as a member's JSON gives them.
fn differences(
    diff_reported: Option<bool>,
    diffed_manifests: Vec<JsonDiffedManifest>,
    drifted_manifests: Vec<JsonDriftedManifest>,
) -> Differences {
    Differences {
        diff_reported,
        diffed_manifests: diffed_manifests.into_iter().map(Into::into).collect(),
        drifted_manifests: drifted_manifests.into_iter().map(Into::into).collect(),
    }
}

impl JsonInput {
    /// The stored input this JSON event describes.
    #[must_use]
    pub fn into_input(self) -> Input {
        match self {
            JsonInput::Apply { manifest } => Input::Apply {
                manifest: manifest.to_string(),
            },
            JsonInput::Delete {
                kind,
                group,
                namespace,
                name,
            } => Input::Delete {
                target: ObjectRef {
                    kind,
                    group,
                    namespace,
                    name,
                },
            },
            JsonInput::Heartbeat {
                cluster,
                properties,
                resource_usage,
            } => Input::Heartbeat(heartbeat(cluster, properties, resource_usage)),
            report @ JsonInput::Report { .. } => report.into_work_report(),
            JsonInput::Approve {
                name,
                namespace,
                reason,
                message,
            } => Input::Approve {
                name,
                namespace,
                reason,
                message,
            },
            JsonInput::Tick => Input::Tick,
            JsonInput::Leave { cluster } => Input::Leave { cluster },
            JsonInput::AnalysisResult {
                run,
                namespace,
                stage,
                task,
                value,
                error,
            } => Input::AnalysisResult(AnalysisResult {
                run,
                namespace,
                stage,
                task,
                value: value.map(JsonNumber::into_text),
                error,
            }),
        }
    }

    /// A report's input; any other kind's as [`JsonInput::into_input`] gives it.
    fn into_work_report(self) -> Input {
        match self {
            JsonInput::Report {
                cluster,
                placement,
                namespace,
                resource_index,
                applied,
                available,
                trackable,
                message,
                failed_manifests,
                diff_reported,
                diffed_manifests,
                drifted_manifests,
            } => Input::WorkReport(WorkReport {
                cluster,
                placement,
                namespace,
                resource_index: resource_index.unwrap_or(RESOURCE_INDEX_CURRENT),
                applied,
                available,
                trackable,
                message,
                failed_manifests: failed_manifests
                    .into_iter()
                    .map(ManifestFailure::from)
                    .collect(),
                differences: differences(diff_reported, diffed_manifests, drifted_manifests),
            }),
            other => other.into_input(),
        }
    }

    /// The JSON form of a stored input.
    #[must_use]
    pub fn from_input(input: &Input) -> Self {
        match input {
            Input::Apply { manifest } => JsonInput::Apply {
                manifest: serde_json::from_str(manifest)
                    .unwrap_or_else(|_| serde_json::Value::String(manifest.clone())),
            },
            Input::Delete { target } => JsonInput::Delete {
                kind: target.kind.clone(),
                group: target.group.clone(),
                namespace: target.namespace.clone(),
                name: target.name.clone(),
            },
            Input::Heartbeat(beat) => JsonInput::Heartbeat {
                cluster: beat.cluster.clone(),
                properties: json_property::from_values(&beat.properties),
                resource_usage: beat.resource_usage.as_ref().map(|u| JsonResourceUsage {
                    capacity: (&u.capacity).into(),
                    allocatable: (&u.allocatable).into(),
                    available: (&u.available).into(),
                }),
            },
            Input::WorkReport(report) => JsonInput::Report {
                cluster: report.cluster.clone(),
                placement: report.placement.clone(),
                namespace: report.namespace.clone(),
                resource_index: (report.resource_index != RESOURCE_INDEX_CURRENT)
                    .then_some(report.resource_index),
                applied: report.applied,
                available: report.available,
                trackable: report.trackable,
                message: report.message.clone(),
                failed_manifests: report
                    .failed_manifests
                    .iter()
                    .map(JsonManifestFailure::from)
                    .collect(),
                diff_reported: report.differences.diff_reported,
                diffed_manifests: (report.differences.diffed_manifests.iter())
                    .map(Into::into)
                    .collect(),
                drifted_manifests: (report.differences.drifted_manifests.iter())
                    .map(Into::into)
                    .collect(),
            },
            Input::Approve {
                name,
                namespace,
                reason,
                message,
            } => JsonInput::Approve {
                name: name.clone(),
                namespace: namespace.clone(),
                reason: reason.clone(),
                message: message.clone(),
            },
            Input::Tick => JsonInput::Tick,
            Input::Leave { cluster } => JsonInput::Leave {
                cluster: cluster.clone(),
            },
            Input::AnalysisResult(result) => JsonInput::AnalysisResult {
                run: result.run.clone(),
                namespace: result.namespace.clone(),
                stage: result.stage.clone(),
                task: result.task.clone(),
                value: result.value.clone().map(JsonNumber::Text),
                error: result.error.clone(),
            },
        }
    }
}

/// The JSON Schema of one event (or of an array of them, which `POST /v1/events` also takes).
#[cfg(feature = "json-schema")]
#[must_use]
pub fn schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(JsonEnvelope)).unwrap_or_default();
    // A top-level field neither the envelope nor the event's type defines is refused
    // (`json_fields`); `unevaluatedProperties` says so across the `oneOf` of the types.
    schema["unevaluatedProperties"] = serde_json::Value::Bool(false);
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_json_round_trips_through_the_stored_form() {
        let text = r#"{"id":"0190b3d2-0000-7000-8000-000000000001","time":"2025-03-12T23:00:00Z",
            "source":"agent/member1","type":"heartbeat","cluster":"member1",
            "properties":{"kubernetes-fleet.io/node-count":"3"}}"#;
        let parsed: JsonEnvelope = serde_json::from_str(text).expect("valid");
        let defaults = JsonDefaults {
            id: Uuid::nil(),
            time: DateTime::<Utc>::MIN_UTC,
            source: "http",
        };
        let envelope = parsed.into_envelope(&defaults);
        assert_eq!(envelope.time, DateTime::<Utc>::MIN_UTC, "the log's time");
        assert_eq!(
            envelope.claimed_time.map(|t| t.to_rfc3339()),
            Some("2025-03-12T23:00:00+00:00".to_owned()),
            "the publisher's time is a claim"
        );
        let Input::Heartbeat(beat) = &envelope.payload else {
            panic!("not a heartbeat")
        };
        assert_eq!(beat.properties["kubernetes-fleet.io/node-count"], "3");
        let back = serde_json::to_value(JsonEnvelope::from_envelope(&envelope)).expect("json");
        assert_eq!(back["type"], "heartbeat");
        assert_eq!(back["source"], "agent/member1");
    }

    #[test]
    fn unknown_types_are_refused() {
        let parsed = serde_json::from_str::<JsonEnvelope>(r#"{"type":"explode"}"#);
        assert!(parsed.is_err());
    }

    #[test]
    fn stream_record_ids_are_stable_and_distinct() {
        assert_eq!(stream_record_id(7), stream_record_id(7));
        assert_ne!(stream_record_id(7), stream_record_id(8));
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn schema_names_every_type() {
        let text = schema().to_string();
        for kind in [
            "apply",
            "delete",
            "heartbeat",
            "report",
            "approve",
            "tick",
            "leave",
            "analysisResult",
        ] {
            assert!(text.contains(&format!("\"{kind}\"")), "schema lacks {kind}");
        }
    }
}
