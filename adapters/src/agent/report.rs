//! What the agent tells the hub, in the JSON event form (`docs/events.md`): a heartbeat with
//! properties, and per Work a report folded from its manifests' outcomes.

use std::collections::BTreeMap;

use chrono::Utc;
use flotilla_core::availability::Availability;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use super::applier::{Applied, ManifestOutcome};
use super::work::{DesiredWork, ManifestId};

/// Failed manifests listed in one report (the hub keeps at most 100).
pub const FAILED_MANIFESTS_MAX: usize = 100;

/// One manifest that failed a condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedManifest {
    /// Which object.
    pub id: ManifestId,
    /// `Applied` or `Available`.
    pub condition: String,
    /// Why.
    pub message: String,
}

/// A Work's state as reported: the fields of a `report` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkReport {
    /// The resource index reported on.
    pub resource_index: u64,
    /// Every manifest applied.
    pub applied: bool,
    /// Every trackable manifest available (and none failed).
    pub available: bool,
    /// `false` when some manifest's availability cannot be tracked.
    pub trackable: bool,
    /// A summary.
    pub message: String,
    /// The manifests that failed to apply or are not available.
    pub failed: Vec<FailedManifest>,
}

impl WorkReport {
    /// Folds per-manifest outcomes into a report.
    #[must_use]
    pub fn from_outcomes(work: &DesiredWork, outcomes: &[ManifestOutcome]) -> Self {
        let mut failed = Vec::new();
        let mut not_available = 0_usize;
        let mut trackable = true;
        for outcome in outcomes {
            match (&outcome.applied, outcome.availability) {
                (Applied::Failed(message), _) => failed.push(FailedManifest {
                    id: outcome.id.clone(),
                    condition: "Applied".to_owned(),
                    message: message.clone(),
                }),
                (Applied::Applied, Availability::NotYetAvailable) => {
                    not_available += 1;
                    failed.push(FailedManifest {
                        id: outcome.id.clone(),
                        condition: "Available".to_owned(),
                        message: "not available yet".to_owned(),
                    });
                }
                (Applied::Applied, Availability::NotTrackable) => trackable = false,
                (Applied::Applied, Availability::Available) => {}
            }
        }
        let apply_failures = failed.iter().filter(|f| f.condition == "Applied").count();
        let message = match (apply_failures, not_available) {
            (0, 0) => String::new(),
            (0, n) => format!("{n} of {} manifests not available yet", outcomes.len()),
            (n, _) => format!("{n} of {} manifests failed to apply", outcomes.len()),
        };
        failed.truncate(FAILED_MANIFESTS_MAX);
        Self {
            resource_index: work.resource_index,
            applied: apply_failures == 0,
            available: apply_failures == 0 && not_available == 0,
            trackable,
            message,
            failed,
        }
    }

    /// Whether nothing will change without a new Work (so no more observing is needed).
    #[must_use]
    pub fn is_settled(&self) -> bool {
        !self.applied || self.available
    }

    /// A short description for output lines.
    #[must_use]
    pub fn summary(&self) -> String {
        let availability = match (self.available, self.trackable) {
            (true, true) => "available",
            (true, false) => "not trackable",
            (false, _) => "not available",
        };
        let applied = if self.applied { "applied" } else { "failed" };
        format!("index {}: {applied}, {availability}", self.resource_index)
    }
}

/// A fresh event envelope in the JSON form.
fn envelope(cluster: &str, kind: &str) -> serde_json::Map<String, Value> {
    let mut event = serde_json::Map::new();
    event.insert("id".into(), json!(Uuid::now_v7().to_string()));
    event.insert("time".into(), json!(Utc::now().to_rfc3339()));
    event.insert("source".into(), json!(format!("agent/{cluster}")));
    event.insert("schemaVersion".into(), json!(3));
    event.insert("type".into(), json!(kind));
    event.insert("cluster".into(), json!(cluster));
    event
}

/// The `report` event for one Work.
#[must_use]
pub fn report_event(cluster: &str, work: &DesiredWork, report: &WorkReport) -> Value {
    let mut event = envelope(cluster, "report");
    event.insert("placement".into(), json!(work.target.placement));
    if let Some(namespace) = &work.target.namespace {
        event.insert("namespace".into(), json!(namespace));
    }
    event.insert("resourceIndex".into(), json!(report.resource_index));
    event.insert("applied".into(), json!(report.applied));
    event.insert("available".into(), json!(report.available));
    event.insert("trackable".into(), json!(report.trackable));
    if !report.message.is_empty() {
        event.insert("message".into(), json!(report.message));
    }
    let failed: Vec<Value> = report
        .failed
        .iter()
        .map(|f| {
            json!({"group": f.id.group, "version": f.id.version, "kind": f.id.kind,
                "namespace": f.id.namespace, "name": f.id.name,
                "condition": f.condition, "message": f.message})
        })
        .collect();
    if !failed.is_empty() {
        event.insert("failedManifests".into(), Value::Array(failed));
    }
    Value::Object(event)
}

/// What a heartbeat carries: properties and resource usage (both may be empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterProperties {
    /// Non-resource properties, e.g. `kubernetes-fleet.io/node-count`.
    pub properties: BTreeMap<String, String>,
    /// `capacity`, `allocatable`, `available`: resource name → quantity.
    pub usage: BTreeMap<String, BTreeMap<String, String>>,
}

/// The `heartbeat` event.
#[must_use]
pub fn heartbeat_event(cluster: &str, properties: &ClusterProperties) -> Value {
    let mut event = envelope(cluster, "heartbeat");
    if !properties.properties.is_empty() {
        event.insert("properties".into(), json!(properties.properties));
    }
    if !properties.usage.is_empty() {
        event.insert("resourceUsage".into(), json!(properties.usage));
    }
    Value::Object(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::work::WorkTarget;

    fn outcome(name: &str, applied: Applied, availability: Availability) -> ManifestOutcome {
        ManifestOutcome {
            id: ManifestId {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                namespace: "ns".into(),
                name: name.into(),
            },
            applied,
            availability,
        }
    }

    fn work() -> DesiredWork {
        DesiredWork {
            target: WorkTarget {
                name: "p-work".into(),
                placement: "p".into(),
                namespace: Some("team".into()),
            },
            resource_index: 4,
            manifests: Vec::new(),
        }
    }

    #[test]
    fn a_failure_and_a_waiting_manifest_are_listed_with_their_condition() {
        let outcomes = [
            outcome(
                "a",
                Applied::Failed("denied".into()),
                Availability::NotTrackable,
            ),
            outcome("b", Applied::Applied, Availability::NotYetAvailable),
            outcome("c", Applied::Applied, Availability::Available),
        ];
        let report = WorkReport::from_outcomes(&work(), &outcomes);
        assert!(!report.applied && !report.available && report.is_settled());
        let event = report_event("m1", &work(), &report);
        assert_eq!(event["namespace"], "team");
        assert_eq!(event["resourceIndex"], 4);
        assert_eq!(event["failedManifests"][0]["condition"], "Applied");
        assert_eq!(event["failedManifests"][0]["message"], "denied");
        assert_eq!(event["failedManifests"][1]["condition"], "Available");
        let defaults = flotilla_core::wire::json::JsonDefaults {
            id: Uuid::nil(),
            time: Utc::now(),
            source: "test",
        };
        let parsed =
            flotilla_core::wire::json::parse_event(event.to_string().as_bytes(), &defaults);
        assert!(parsed.is_ok(), "{parsed:?}");
    }

    #[test]
    fn not_trackable_manifests_make_an_applied_work_available_but_untracked() {
        let outcomes = [outcome("a", Applied::Applied, Availability::NotTrackable)];
        let report = WorkReport::from_outcomes(&work(), &outcomes);
        assert!(report.applied && report.available && !report.trackable);
        let waiting = [outcome(
            "a",
            Applied::Applied,
            Availability::NotYetAvailable,
        )];
        assert!(!WorkReport::from_outcomes(&work(), &waiting).is_settled());
    }
}
