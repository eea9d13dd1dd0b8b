//! What the agent tells the hub, in the JSON event form (`docs/events.md`): a heartbeat with
//! properties, and per Work a report folded from its manifests' outcomes.
//!
//! A report that uses none of the `kube` applier's findings is exactly the schema-3 report the
//! hub has always taken. One that does — `diffReported` (ReportDiff mode, where `applied`,
//! `available` and `trackable` are left out), `diffedManifests`, `driftedManifests`, or a
//! failed manifest's `reason` — says `"schemaVersion": 4`, since a hub that only knows 3
//! rejects those fields.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use chrono::Utc;
use flotilla_core::query::availability::Availability;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use super::applier::{Applied, ManifestOutcome, ObservedDiffs, PatchDetail};
use super::work::{DesiredWork, ManifestId};

/// Failed manifests listed in one report (the hub keeps at most 100).
pub const FAILED_MANIFESTS_MAX: usize = 100;
/// Diffed, and drifted, manifests listed in one report.
pub const OBSERVED_MANIFESTS_MAX: usize = 100;
/// Differences listed per manifest (KubeFleet's `patchDetailPerObjLimit`).
pub const DIFFS_PER_MANIFEST_MAX: usize = 100;
/// The schema version of a report that uses only the schema-3 fields.
pub const SCHEMA_VERSION_PLAIN: u16 = 3;
/// The schema version of a report with diffs, drifts, `diffReported` or reasons.
pub const SCHEMA_VERSION_FINDINGS: u16 = 4;

/// One manifest that failed a condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedManifest {
    /// Which object.
    pub id: ManifestId,
    /// `Applied` or `Available`.
    pub condition: String,
    /// Why.
    pub message: String,
    /// Why, as KubeFleet names it (`FoundDrifts`, `NotTakenOver`, …), when the applier says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One manifest with differences (or drifts) between the hub and the member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedManifest {
    /// Which object.
    pub id: ManifestId,
    /// The member object's generation (`None`: it does not exist) and the differences.
    pub observed: ObservedDiffs,
}

/// A Work's state as reported: the fields of a `report` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkReport {
    /// The resource index reported on.
    pub resource_index: u64,
    /// Every manifest applied (false in ReportDiff mode, where it is not reported).
    pub applied: bool,
    /// Every trackable manifest available (and none failed).
    pub available: bool,
    /// `false` when some manifest's availability cannot be tracked.
    pub trackable: bool,
    /// A summary.
    pub message: String,
    /// The manifests that failed to apply or are not available.
    pub failed: Vec<FailedManifest>,
    /// ReportDiff mode: whether every manifest was compared; `None` in the apply modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_reported: Option<bool>,
    /// Manifests whose member object differs from the hub's manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffed: Vec<ObservedManifest>,
    /// Manifests whose member object drifted from what the agent applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drifted: Vec<ObservedManifest>,
}

/// One manifest's differences, at most [`DIFFS_PER_MANIFEST_MAX`] of them.
fn capped(id: &ManifestId, observed: &ObservedDiffs) -> ObservedManifest {
    let mut observed = observed.clone();
    observed.details.truncate(DIFFS_PER_MANIFEST_MAX);
    ObservedManifest {
        id: id.clone(),
        observed,
    }
}

impl WorkReport {
    /// Folds per-manifest outcomes into a report. It is a ReportDiff report when some outcome
    /// is a comparison (`DiffReported` or `DiffFailed`).
    #[must_use]
    pub fn from_outcomes(work: &DesiredWork, outcomes: &[ManifestOutcome]) -> Self {
        let report_diff = outcomes
            .iter()
            .any(|o| matches!(o.applied, Applied::DiffReported | Applied::DiffFailed(_)));
        let mut failed = Vec::new();
        let mut diffed = Vec::new();
        let mut drifted = Vec::new();
        let mut not_available = 0_usize;
        let mut trackable = true;
        for outcome in outcomes {
            let reason = outcome.findings.reason.clone();
            let failure = |message: &str, condition: &str| FailedManifest {
                id: outcome.id.clone(),
                condition: condition.to_owned(),
                message: message.to_owned(),
                reason: reason.clone(),
            };
            match (&outcome.applied, outcome.availability) {
                (Applied::Failed(message) | Applied::DiffFailed(message), _) => {
                    failed.push(failure(message, "Applied"));
                }
                (Applied::DiffReported, _) => {}
                (Applied::Applied, Availability::NotYetAvailable) => {
                    not_available += 1;
                    failed.push(failure("not available yet", "Available"));
                }
                (Applied::Applied, Availability::NotTrackable) => trackable = false,
                (Applied::Applied, Availability::Available) => {}
            }
            if let Some(diffs) = &outcome.findings.diffs {
                diffed.push(capped(&outcome.id, diffs));
            }
            if let Some(drifts) = &outcome.findings.drifts {
                drifted.push(capped(&outcome.id, drifts));
            }
        }
        let apply_failures = failed.iter().filter(|f| f.condition == "Applied").count();
        let total = outcomes.len();
        let message = match (report_diff, apply_failures, not_available) {
            (true, 0, _) if diffed.is_empty() => String::new(),
            (true, 0, _) => format!("{} of {total} manifests differ from the hub", diffed.len()),
            (true, n, _) => format!("{n} of {total} manifests could not be compared"),
            (false, 0, 0) => String::new(),
            (false, 0, n) => format!("{n} of {total} manifests not available yet"),
            (false, n, _) => format!("{n} of {total} manifests failed to apply"),
        };
        failed.truncate(FAILED_MANIFESTS_MAX);
        diffed.truncate(OBSERVED_MANIFESTS_MAX);
        drifted.truncate(OBSERVED_MANIFESTS_MAX);
        Self {
            resource_index: work.resource_index,
            applied: !report_diff && apply_failures == 0,
            available: !report_diff && apply_failures == 0 && not_available == 0,
            trackable,
            message,
            failed,
            diff_reported: report_diff.then_some(apply_failures == 0),
            diffed,
            drifted,
        }
    }

    /// Whether nothing will change without a new Work (so no more observing is needed).
    #[must_use]
    pub fn is_settled(&self) -> bool {
        self.diff_reported.is_some() || !self.applied || self.available
    }

    /// Whether the report uses a field a schema-3 hub does not know.
    #[must_use]
    pub fn has_findings(&self) -> bool {
        self.diff_reported.is_some()
            || !self.diffed.is_empty()
            || !self.drifted.is_empty()
            || self.failed.iter().any(|f| f.reason.is_some())
    }

    /// A short description for output lines.
    #[must_use]
    pub fn summary(&self) -> String {
        if let Some(complete) = self.diff_reported {
            let state = if complete {
                "diff reported"
            } else {
                "diff incomplete"
            };
            return format!(
                "index {}: {state}, {} manifests differ",
                self.resource_index,
                self.diffed.len()
            );
        }
        let availability = match (self.available, self.trackable) {
            (true, true) => "available",
            (true, false) => "not trackable",
            (false, _) => "not available",
        };
        let applied = if self.applied { "applied" } else { "failed" };
        let drifted = if self.drifted.is_empty() {
            String::new()
        } else {
            format!(", {} drifted", self.drifted.len())
        };
        format!(
            "index {}: {applied}, {availability}{drifted}",
            self.resource_index
        )
    }
}

/// A fresh event envelope in the JSON form.
fn envelope(cluster: &str, kind: &str) -> serde_json::Map<String, Value> {
    let mut event = serde_json::Map::new();
    event.insert("id".into(), json!(Uuid::now_v7().to_string()));
    event.insert("time".into(), json!(Utc::now().to_rfc3339()));
    event.insert("source".into(), json!(format!("agent/{cluster}")));
    event.insert("schemaVersion".into(), json!(SCHEMA_VERSION_PLAIN));
    event.insert("type".into(), json!(kind));
    event.insert("cluster".into(), json!(cluster));
    event
}

/// The `leave` event (schema 4): the agent removed everything it placed.
#[must_use]
pub fn leave_event(cluster: &str) -> Value {
    let mut event = envelope(cluster, "leave");
    event.insert("schemaVersion".into(), json!(SCHEMA_VERSION_FINDINGS));
    Value::Object(event)
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
    if let Some(complete) = report.diff_reported {
        event.insert("diffReported".into(), json!(complete));
    } else {
        event.insert("applied".into(), json!(report.applied));
        event.insert("available".into(), json!(report.available));
        event.insert("trackable".into(), json!(report.trackable));
    }
    if !report.message.is_empty() {
        event.insert("message".into(), json!(report.message));
    }
    let failed: Vec<Value> = report
        .failed
        .iter()
        .map(|f| {
            let mut entry = json!({"group": f.id.group, "version": f.id.version,
                "kind": f.id.kind, "namespace": f.id.namespace, "name": f.id.name,
                "condition": f.condition, "message": f.message});
            if let Some(reason) = &f.reason {
                entry["reason"] = json!(reason);
            }
            entry
        })
        .collect();
    if !failed.is_empty() {
        event.insert("failedManifests".into(), Value::Array(failed));
    }
    if !report.diffed.is_empty() {
        let diffed = observed_json(&report.diffed, "observedDiffs");
        event.insert("diffedManifests".into(), diffed);
    }
    if !report.drifted.is_empty() {
        let drifted = observed_json(&report.drifted, "observedDrifts");
        event.insert("driftedManifests".into(), drifted);
    }
    if report.has_findings() {
        event.insert("schemaVersion".into(), json!(SCHEMA_VERSION_FINDINGS));
    }
    Value::Object(event)
}

/// `diffedManifests` / `driftedManifests`: identity, the member's generation when the object
/// exists, and the details under `details_field`.
fn observed_json(manifests: &[ObservedManifest], details_field: &str) -> Value {
    let entries = manifests
        .iter()
        .map(|m| {
            let mut entry = json!({"group": m.id.group, "version": m.id.version,
                "kind": m.id.kind, "namespace": m.id.namespace, "name": m.id.name});
            if let Some(generation) = m.observed.generation {
                entry["observedInMemberClusterGeneration"] = json!(generation);
            }
            let details: Vec<Value> = m.observed.details.iter().map(detail_json).collect();
            entry[details_field] = Value::Array(details);
            entry
        })
        .collect();
    Value::Array(entries)
}

fn detail_json(detail: &PatchDetail) -> Value {
    let mut entry = json!({"path": detail.path});
    if let Some(member) = &detail.value_in_member {
        entry["valueInMember"] = json!(member);
    }
    if let Some(hub) = &detail.value_in_hub {
        entry["valueInHub"] = json!(hub);
    }
    entry
}

/// What a heartbeat carries: properties and resource usage (both may be empty), either fixed
/// (`sim`'s flags) or measured by the applier (`live`, which the `kube` applier refreshes from
/// the cluster's nodes and pods; each heartbeat sends its latest measurement).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterProperties {
    /// Non-resource properties, e.g. `kubernetes-fleet.io/node-count`.
    pub properties: BTreeMap<String, String>,
    /// `capacity`, `allocatable`, `available`: resource name → quantity.
    pub usage: BTreeMap<String, BTreeMap<String, String>>,
    /// The applier's latest measurement, which replaces the two maps above once there is one.
    pub live: Option<LiveProperties>,
}

/// Properties an applier measures while the agent runs: a shared cell the applier writes and
/// each heartbeat reads.
#[derive(Debug, Clone, Default)]
pub struct LiveProperties(Arc<RwLock<Option<Measured>>>);

/// One measurement of the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    /// As [`ClusterProperties::properties`].
    pub properties: BTreeMap<String, String>,
    /// As [`ClusterProperties::usage`].
    pub usage: BTreeMap<String, BTreeMap<String, String>>,
}

impl PartialEq for LiveProperties {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LiveProperties {}

impl LiveProperties {
    /// Replaces the measurement.
    pub fn set(&self, measured: Measured) {
        // A writer that panicked left a whole value behind; keep using it.
        let mut cell = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *cell = Some(measured);
    }

    /// The latest measurement, if any.
    #[must_use]
    pub fn get(&self) -> Option<Measured> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl ClusterProperties {
    /// What the next heartbeat sends: the latest measurement, else the fixed maps.
    #[must_use]
    pub fn current(&self) -> Measured {
        self.live
            .as_ref()
            .and_then(LiveProperties::get)
            .unwrap_or_else(|| Measured {
                properties: self.properties.clone(),
                usage: self.usage.clone(),
            })
    }
}

/// The `heartbeat` event.
#[must_use]
pub fn heartbeat_event(cluster: &str, properties: &ClusterProperties) -> Value {
    let mut event = envelope(cluster, "heartbeat");
    let current = properties.current();
    if !current.properties.is_empty() {
        event.insert("properties".into(), json!(current.properties));
    }
    if !current.usage.is_empty() {
        event.insert("resourceUsage".into(), json!(current.usage));
    }
    Value::Object(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::WorkTarget;

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
            findings: crate::applier::Findings::default(),
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
            apply_strategy: crate::work::ApplyStrategy::default(),
            override_snapshots: None,
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
    fn a_report_without_findings_stays_schema_3_and_one_with_them_says_4() {
        let plain = [outcome("a", Applied::Applied, Availability::Available)];
        let report = WorkReport::from_outcomes(&work(), &plain);
        assert!(!report.has_findings());
        let event = report_event("m1", &work(), &report);
        assert_eq!(event["schemaVersion"], 3);
        for field in ["diffReported", "diffedManifests", "driftedManifests"] {
            assert!(event.get(field).is_none(), "{field}");
        }
        let mut drifted = outcome("a", Applied::Applied, Availability::Available);
        drifted.findings.drifts = Some(ObservedDiffs {
            generation: Some(3),
            details: vec![PatchDetail {
                path: "/spec/replicas".into(),
                value_in_member: Some("5".into()),
                value_in_hub: Some("3".into()),
            }],
        });
        let report = WorkReport::from_outcomes(&work(), &[drifted]);
        assert!(report.applied && report.available && report.is_settled());
        let event = report_event("m1", &work(), &report);
        assert_eq!(event["schemaVersion"], 4);
        assert_eq!(event["applied"], true);
        let entry = &event["driftedManifests"][0];
        assert_eq!(entry["observedInMemberClusterGeneration"], 3);
        assert_eq!(
            entry["observedDrifts"],
            json!([{"path": "/spec/replicas", "valueInMember": "5", "valueInHub": "3"}])
        );
        // A state file written before these fields existed still reads.
        let old = json!({"resource_index": 1, "applied": true, "available": true,
            "trackable": true, "message": "", "failed": [{"id": {"group": "", "version": "v1",
            "kind": "ConfigMap", "namespace": "n", "name": "c"}, "condition": "Available",
            "message": "not available yet"}]});
        let read: Result<WorkReport, _> = serde_json::from_value(old);
        assert!(read.is_ok_and(|r| r.diff_reported.is_none() && r.failed[0].reason.is_none()));
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
