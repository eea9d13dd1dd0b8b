//! What the hub keeps of the differences members report, and how a `ReportDiff` placement rolls
//! out: diffed and drifted manifests are kept with the log's times — the report's time, and the
//! time a manifest was first reported so in an unbroken run of reports — within their limits;
//! a `ReportDiff` cluster counts as ready once its diff is reported (KubeFleet's
//! `isBindingReady`), and never towards `canBeReady`, so newly picked clusters are bound
//! without waiting for the ones on their way out; a staged run's cluster succeeds once its diff
//! is reported; and an eviction of a diff-reporting binding goes ahead whatever the budget
//! (KubeFleet's `IsBindingDiffReported`).

mod common;

use chrono::Duration;
use common::{Hub, crp, member, namespace};
use flotilla_core::state::{DIFFERENCES_MAX, PATCH_DETAILS_MAX, WorkStatus};
use flotilla_core::{
    Differences, Input, ManifestDifference, PatchDetail, WorkReport, query::placement::BindingState,
};
use serde_json::{Value, json};

fn deployment(name: &str, details: usize) -> ManifestDifference {
    ManifestDifference {
        group: "apps".into(),
        version: "v1".into(),
        kind: "Deployment".into(),
        namespace: "test-ns".into(),
        name: name.into(),
        observed_generation: Some(4),
        details: (0..details)
            .map(|i| PatchDetail {
                path: format!("/spec/template/metadata/labels/l{i}"),
                value_in_member: Some("member".into()),
                value_in_hub: None,
            })
            .collect(),
    }
}

/// A report on the cluster's current work with these differences (applied and available
/// unless the member only reports diffs).
fn report(hub: &mut Hub, placement: &str, cluster: &str, differences: Differences) {
    let resource_index = hub
        .placement(placement)
        .bindings
        .get(cluster)
        .expect("a binding")
        .resource_index
        .unwrap_or(0);
    let applies = differences.diff_reported.is_none();
    hub.send(Input::WorkReport(WorkReport {
        cluster: cluster.into(),
        placement: placement.into(),
        namespace: None,
        resource_index,
        applied: applies.then_some(true),
        available: applies.then_some(true),
        trackable: true,
        message: String::new(),
        failed_manifests: Vec::new(),
        differences,
    }));
}

fn kept(hub: &Hub, placement: &str, cluster: &str) -> WorkStatus {
    (hub.placement(placement).bindings.get(cluster))
        .expect("a binding")
        .report
        .expect("a report is kept")
}

/// Joined members and a placement of `test-ns` with this policy and strategy.
fn fleet(clusters: &[&str], policy: Value, strategy: Value) -> Hub {
    let mut hub = Hub::new();
    for cluster in clusters {
        hub.apply(&member(cluster, json!({}), json!([])));
        hub.beat(cluster);
    }
    hub.apply(&namespace("test-ns"));
    let mut placement = crp("web", policy);
    placement["spec"]["strategy"] = strategy;
    hub.apply(&placement);
    hub
}

fn report_diff(max_unavailable: u32) -> Value {
    json!({"type": "RollingUpdate", "applyStrategy": {"type": "ReportDiff"},
           "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": 0}})
}

#[test]
fn diffed_manifests_keep_the_time_they_were_first_reported_while_reports_keep_listing_them() {
    let mut hub = fleet(&["c1"], json!({"placementType": "PickAll"}), json!({}));
    let first = hub.now;
    let diffed = |names: &[&str], details| Differences {
        diffed_manifests: names.iter().map(|n| deployment(n, details)).collect(),
        ..Differences::default()
    };
    report(&mut hub, "web", "c1", diffed(&["web"], 1));
    let status = kept(&hub, "web", "c1");
    assert_eq!(status.reported_at, first);
    assert_eq!(status.diffed()[0].first_observed, first);

    hub.advance(30);
    let second = hub.now;
    report(&mut hub, "web", "c1", diffed(&["web", "api"], 2));
    let status = kept(&hub, "web", "c1");
    assert_eq!(status.reported_at, second, "observed again now");
    assert_eq!(
        status.diffed()[0].first_observed,
        first,
        "web: diffed since the first"
    );
    assert_eq!(
        status.diffed()[0].manifest.details.len(),
        2,
        "the newest details"
    );
    assert_eq!(status.diffed()[1].first_observed, second, "api: new");

    hub.advance(30);
    report(&mut hub, "web", "c1", diffed(&["api"], 2));
    hub.advance(30);
    let fourth = hub.now;
    report(&mut hub, "web", "c1", diffed(&["api", "web"], 2));
    let status = kept(&hub, "web", "c1");
    assert_eq!(
        status.diffed()[0].first_observed,
        second,
        "api's run goes on"
    );
    assert_eq!(
        status.diffed()[1].first_observed,
        fourth,
        "web's run was broken by a report without it"
    );
}

#[test]
fn drifted_manifests_are_kept_likewise_and_bounded() {
    let mut hub = fleet(&["c1"], json!({"placementType": "PickAll"}), json!({}));
    let first = hub.now;
    let drifted = |count: usize, details| Differences {
        drifted_manifests: (0..count)
            .map(|i| deployment(&format!("d{i:03}"), details))
            .collect(),
        ..Differences::default()
    };
    report(&mut hub, "web", "c1", drifted(1, 1));
    hub.advance(60);
    report(
        &mut hub,
        "web",
        "c1",
        drifted(DIFFERENCES_MAX + 5, PATCH_DETAILS_MAX + 5),
    );
    let status = kept(&hub, "web", "c1");
    assert_eq!(status.drifted().len(), DIFFERENCES_MAX);
    assert!(
        status
            .drifted()
            .iter()
            .all(|d| d.manifest.details.len() == PATCH_DETAILS_MAX)
    );
    assert_eq!(
        status.drifted()[0].first_observed,
        first,
        "d000 drifted since the first"
    );
    assert_eq!(
        status.drifted()[1].first_observed,
        first + Duration::seconds(60)
    );
    assert!(status.diffed().is_empty());
}

#[test]
fn a_report_diff_cluster_is_ready_once_its_diff_is_reported() {
    let clusters = ["c1", "c2", "c3"];
    let mut hub = fleet(
        &clusters,
        json!({"placementType": "PickAll"}),
        report_diff(1),
    );
    let reported = |complete| Differences {
        diff_reported: Some(complete),
        ..Differences::default()
    };
    for cluster in clusters {
        report(&mut hub, "web", cluster, reported(true));
    }
    // New resources: one cluster at a time, each once its diff is reported.
    let mut changed = namespace("test-ns");
    changed["metadata"]["labels"] = json!({"v": "2"});
    hub.apply(&changed);
    let on_latest = |hub: &Hub| {
        let placement = hub.placement("web");
        let latest = placement.latest_resources().map(|r| r.index);
        let bindings = placement.bindings.values();
        bindings.filter(|b| b.resource_index == latest).count()
    };
    assert_eq!(on_latest(&hub), 1);
    let updated = hub
        .placement("web")
        .bindings
        .values()
        .find(|b| b.report.is_none())
        .map(|b| b.cluster.to_string())
        .expect("one was updated");
    report(&mut hub, "web", &updated, reported(false));
    assert_eq!(on_latest(&hub), 1, "an incomplete diff report is not ready");
    report(&mut hub, "web", &updated, reported(true));
    assert_eq!(
        on_latest(&hub),
        2,
        "the next cluster goes once the diff is reported"
    );
}

#[test]
fn clusters_that_only_report_diffs_leave_room_for_new_ones_at_once() {
    let fixed = |names: &[&str]| json!({"placementType": "PickFixed", "clusterNames": names});
    let bound = |hub: &Hub| -> Vec<String> {
        let bindings = hub.placement("web").bindings.values();
        let bound = bindings.filter(|b| b.state == BindingState::Bound);
        bound.map(|b| b.cluster.to_string()).collect()
    };
    let moving = |strategy: Value| {
        let mut hub = fleet(
            &["c1", "c2", "c3", "c4"],
            fixed(&["c1", "c2"]),
            strategy.clone(),
        );
        let mut moved = crp("web", fixed(&["c3", "c4"]));
        moved["spec"]["strategy"] = strategy;
        hub.apply(&moved);
        hub
    };
    // Applying: the unscheduled c1 and c2 can still become ready, so with no surge the new
    // clusters wait for them to go (and they cannot go before anything is ready).
    let applying = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}});
    assert!(bound(&moving(applying)).is_empty());
    // Reporting diffs: nothing on c1 and c2 is kept available, so c3 and c4 are bound at once.
    assert_eq!(bound(&moving(report_diff(1))), ["c3", "c4"]);
}

#[test]
fn a_staged_run_moves_on_once_a_clusters_diff_is_reported() {
    let strategy = json!({"type": "External", "applyStrategy": {"type": "ReportDiff"}});
    let mut hub = fleet(&["c1", "c2"], json!({"placementType": "PickAll"}), strategy);
    hub.apply(
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": "one-by-one"},
        "spec": {"stages": [{"name": "all", "labelSelector": {}}]}}),
    );
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": "run"},
        "spec": {"placementName": "web", "stagedRolloutStrategyName": "one-by-one", "state": "Run"}}));
    let carries = |hub: &Hub, cluster: &str| {
        hub.placement("web")
            .bindings
            .get(cluster)
            .expect("a binding")
            .resource_index
            .is_some()
    };
    assert!(carries(&hub, "c1") && !carries(&hub, "c2"), "one at a time");
    let outcome = |complete| Differences {
        diff_reported: Some(complete),
        ..Differences::default()
    };
    report(&mut hub, "web", "c1", outcome(false));
    assert!(!carries(&hub, "c2"), "an incomplete diff keeps c1 updating");
    report(&mut hub, "web", "c1", outcome(true));
    assert!(
        carries(&hub, "c2"),
        "c1 succeeded once its diff was reported"
    );
}

#[test]
fn evicting_a_cluster_that_only_reports_diffs_ignores_the_budget() {
    let mut hub = fleet(
        &["c1", "c2"],
        json!({"placementType": "PickAll"}),
        report_diff(1),
    );
    hub.apply(
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget", "metadata": {"name": "web"},
        "spec": {"minAvailable": 2}}),
    );
    let decisions = hub.apply(
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementEviction", "metadata": {"name": "drain-c1"},
        "spec": {"placementName": "web", "clusterName": "c1"}}),
    );
    let executed = decisions.iter().find_map(|d| match d {
        flotilla_core::Decision::EvictionReconciled { executed, .. } => Some(*executed),
        _ => None,
    });
    assert_eq!(executed, Some(true), "{decisions:?}");
    // Its binding went (PickAll may pick the cluster again at once, with a new one).
    assert!(decisions.iter().any(|d| matches!(d,
        flotilla_core::Decision::BindingRemoved { cluster, .. } if cluster == "c1")));
}
