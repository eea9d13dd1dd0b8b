//! Proves that what members report differing reads as KubeFleet shows it: `diffedPlacements` and
//! `driftedPlacements` on the per-cluster status and the binding, with the hub's times
//! (`observationTime` the report's, the first-observed time kept while reports keep listing the
//! manifest); `failedPlacements` with the member's reason; and a `ReportDiff` placement whose
//! conditions end with `DiffReported` — pending, incomplete or failed, completed.

use flotilla_core::{
    Differences, Input, ManifestCondition, ManifestDifference, ManifestFailure, PatchDetail,
    WorkReport,
};
use serde_json::{Value, json};

use super::work::crp_key;
use super::{Hub, join};
use crate::{render_all, render_object};

const CLUSTER: &str = "member-1";

/// One joined cluster, namespace `app`, and PickAll `crp-1` of it with this apply strategy.
fn fleet(apply_strategy: &Value) -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, CLUSTER, &json!({}));
    hub.apply(
        1,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}),
    );
    hub.apply(
        2,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp-1"},
            "spec": {
                "policy": {"placementType": "PickAll"},
                "resourceSelectors": [{"group": "", "kind": "Namespace", "name": "app", "version": "v1"}],
                "strategy": {"applyStrategy": apply_strategy}
            }
        }),
    );
    hub
}

fn namespace_difference(details: Vec<PatchDetail>) -> ManifestDifference {
    ManifestDifference {
        group: String::new(),
        version: "v1".into(),
        kind: "Namespace".into(),
        namespace: String::new(),
        name: "app".into(),
        observed_generation: Some(3),
        details,
    }
}

fn label(member: Option<&str>, hub: Option<&str>) -> PatchDetail {
    PatchDetail {
        path: "/metadata/labels/team".into(),
        value_in_member: member.map(Into::into),
        value_in_hub: hub.map(Into::into),
    }
}

fn report(hub: &mut Hub, seconds: i64, outcome: Option<bool>, differences: Differences) {
    report_failing(hub, seconds, outcome, Vec::new(), differences);
}

/// A report on the cluster's work: applied (and available) as `applied` says, unless the
/// differences carry a `ReportDiff` outcome.
fn report_failing(
    hub: &mut Hub,
    seconds: i64,
    applied: Option<bool>,
    failed_manifests: Vec<ManifestFailure>,
    differences: Differences,
) {
    hub.fold(
        seconds,
        "agent/member-1",
        Input::WorkReport(WorkReport {
            cluster: CLUSTER.into(),
            placement: "crp-1".into(),
            namespace: None,
            resource_index: 0,
            applied,
            available: applied.filter(|applied| *applied),
            trackable: true,
            message: String::new(),
            failed_manifests,
            differences,
        }),
    );
}

fn cluster_status(hub: &Hub) -> Value {
    let crp = render_object(&hub.state, &crp_key()).expect("the placement");
    crp["status"]["placementStatuses"][0].clone()
}

fn binding_status(hub: &Hub) -> Value {
    let objects = render_all(&hub.state);
    let binding = objects
        .iter()
        .find(|o| o["kind"] == "ClusterResourceBinding");
    binding.expect("the binding")["status"].clone()
}

fn condition_types(conditions: &Value) -> Vec<String> {
    let list = conditions.as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|c| c["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn last_condition(conditions: &Value) -> Value {
    let list = conditions.as_array().cloned().unwrap_or_default();
    list.last().cloned().unwrap_or_default()
}

#[test]
fn a_takeover_diff_shows_in_diffed_placements_with_the_hubs_times_and_the_failure_reason() {
    let mut hub = fleet(&json!({"whenToTakeOver": "IfNoDiff"}));
    let not_taken_over = namespace_not_applied("found configuration differences", "NotTakenOver");
    let diffed = |details| Differences {
        diffed_manifests: vec![namespace_difference(details)],
        ..Differences::default()
    };
    let first = vec![label(Some("db"), Some("web"))];
    report_failing(
        &mut hub,
        10,
        Some(false),
        vec![not_taken_over.clone()],
        diffed(first),
    );
    let both = vec![label(Some("db"), Some("web")), label(None, Some("x"))];
    report_failing(
        &mut hub,
        40,
        Some(false),
        vec![not_taken_over],
        diffed(both),
    );
    let status = cluster_status(&hub);
    assert_eq!(
        status["diffedPlacements"],
        json!([{
            "version": "v1", "kind": "Namespace", "name": "app",
            "observationTime": "2024-04-29T09:59:00Z",
            "targetClusterObservedGeneration": 3,
            "firstDiffedObservedTime": "2024-04-29T09:58:30Z",
            "observedDiffs": [
                {"path": "/metadata/labels/team", "valueInMember": "db", "valueInHub": "web"},
                {"path": "/metadata/labels/team", "valueInHub": "x"}
            ]
        }])
    );
    assert_eq!(
        status["failedPlacements"][0]["condition"]["reason"],
        "NotTakenOver"
    );
    let binding = binding_status(&hub);
    assert_eq!(binding["diffedPlacements"], status["diffedPlacements"]);
    assert_eq!(binding["failedPlacements"], status["failedPlacements"]);
}

#[test]
fn drifts_show_in_drifted_placements_whether_or_not_the_apply_succeeded() {
    let mut hub = fleet(&json!({"whenToApply": "IfNotDrifted"}));
    let drifted = || Differences {
        drifted_manifests: vec![namespace_difference(vec![label(Some("db"), Some("web"))])],
        ..Differences::default()
    };
    report(&mut hub, 10, Some(true), drifted());
    let status = cluster_status(&hub);
    let expected = |observed: &str| {
        json!([{
            "version": "v1", "kind": "Namespace", "name": "app",
            "observationTime": observed,
            "targetClusterObservedGeneration": 3,
            "firstDriftedObservedTime": "2024-04-29T09:58:30Z",
            "observedDrifts": [
                {"path": "/metadata/labels/team", "valueInMember": "db", "valueInHub": "web"}
            ]
        }])
    };
    assert_eq!(
        status["driftedPlacements"],
        expected("2024-04-29T09:58:30Z")
    );
    assert_eq!(last_condition(&status["conditions"])["type"], "Available");
    // The drift blocks the next apply: the member says so with KubeFleet's reason.
    let found_drifts = namespace_not_applied("found drifts", "FoundDrifts");
    report_failing(&mut hub, 70, Some(false), vec![found_drifts], drifted());
    let status = cluster_status(&hub);
    assert_eq!(
        status["driftedPlacements"],
        expected("2024-04-29T09:59:30Z")
    );
    assert_eq!(
        status["failedPlacements"][0]["condition"]["reason"],
        "FoundDrifts"
    );
    assert_eq!(
        binding_status(&hub)["driftedPlacements"],
        status["driftedPlacements"]
    );
    // A report without the drift ends it.
    report(&mut hub, 80, Some(true), Differences::default());
    assert!(cluster_status(&hub).get("driftedPlacements").is_none());
}

#[test]
fn a_report_diff_placement_ends_its_conditions_with_diff_reported() {
    let mut hub = fleet(&json!({"type": "ReportDiff"}));
    let placement_conditions = |hub: &Hub| {
        render_object(&hub.state, &crp_key()).expect("the placement")["status"]["conditions"]
            .clone()
    };
    let conditions = placement_conditions(&hub);
    let pending = last_condition(&conditions);
    assert_eq!(pending["type"], "ClusterResourcePlacementDiffReported");
    assert_eq!(pending["status"], "Unknown");
    assert_eq!(pending["reason"], "DiffReportingPending");
    let cluster = last_condition(&cluster_status(&hub)["conditions"]);
    assert_eq!(
        (cluster["type"].clone(), cluster["reason"].clone()),
        (json!("DiffReported"), json!("DiffReportingPending"))
    );

    let outcome = |complete| Differences {
        diff_reported: Some(complete),
        diffed_manifests: vec![namespace_difference(vec![label(Some("db"), None)])],
        ..Differences::default()
    };
    report(&mut hub, 10, None, outcome(false));
    let incomplete = last_condition(&placement_conditions(&hub));
    assert_eq!(
        (incomplete["status"].clone(), incomplete["reason"].clone()),
        (json!("False"), json!("DiffReportingIncompleteOrFailed"))
    );
    assert!(
        cluster_status(&hub).get("diffedPlacements").is_none(),
        "an incomplete diff is not shown"
    );

    report(&mut hub, 20, None, outcome(true));
    let conditions = placement_conditions(&hub);
    assert_eq!(
        condition_types(&conditions),
        [
            "ClusterResourcePlacementScheduled",
            "ClusterResourcePlacementRolloutStarted",
            "ClusterResourcePlacementOverridden",
            "ClusterResourcePlacementWorkSynchronized",
            "ClusterResourcePlacementDiffReported"
        ]
    );
    let completed = last_condition(&conditions);
    assert_eq!(
        (completed["status"].clone(), completed["reason"].clone()),
        (json!("True"), json!("DiffReportingCompleted"))
    );
    assert_eq!(
        completed["message"],
        "Diff reporting in 1 cluster(s) has been completed"
    );
    let status = cluster_status(&hub);
    let cluster = last_condition(&status["conditions"]);
    assert_eq!(
        (cluster["type"].clone(), cluster["reason"].clone()),
        (json!("DiffReported"), json!("AllWorkHaveDiffReported"))
    );
    assert_eq!(status["diffedPlacements"][0]["name"], "app");
    let binding = binding_status(&hub);
    assert_eq!(
        last_condition(&binding["conditions"])["type"],
        "DiffReported"
    );
    assert_eq!(binding["diffedPlacements"], status["diffedPlacements"]);
    let objects = render_all(&hub.state);
    let work = objects
        .iter()
        .find(|o| o["kind"] == "Work")
        .expect("the work");
    assert_eq!(
        condition_types(&work["status"]["conditions"]),
        ["DiffReported"]
    );
}

/// The member's failure to apply the placed namespace `app`.
fn namespace_not_applied(message: &str, reason: &str) -> ManifestFailure {
    ManifestFailure {
        group: String::new(),
        version: "v1".into(),
        kind: "Namespace".into(),
        namespace: String::new(),
        name: "app".into(),
        condition: ManifestCondition::Applied,
        message: message.into(),
        reason: Some(reason.into()),
    }
}
