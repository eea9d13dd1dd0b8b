//! Proves each bound cluster gets a `Work` in `fleet-member-<cluster>` with the placement's
//! manifests and its member's report, and that bindings and the placement's status read as
//! KubeFleet writes them once members report: all applied and available (not trackable) as in
//! KubeFleet's sample, or one failed apply (`failedPlacements`, Applied False). The fixtures here
//! serve the `progress` tests too.

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::derived::key;
use super::placement::default_apply_strategy;
use super::resource_placement::{config_map as team_a_config_map, team_a_placement};
use super::{Hub, Report, crp_1, join, uid};
use crate::derived::derived_uid;
use crate::{list, render_all, render_object, resolve_kind, table, works_for_cluster};

pub(super) const CLUSTERS: [&str; 3] = ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"];

/// The seed's fleet: three joined clusters (events 1–6), the namespace `application-1`
/// (event 7) with the ConfigMap `app-config-1` (event 8), then `crp-1` (event 9, t=20s,
/// resourceVersion 6): PickAll, `unavailablePeriodSeconds: 2`, strategy `strategy_type`.
pub(super) fn seed_fleet(strategy_type: &str) -> Hub {
    let mut hub = Hub::new();
    for (i, name) in (0_i64..).zip(CLUSTERS) {
        join(&mut hub, 2 * i, name, &json!({}));
    }
    hub.apply(
        10,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "application-1"}}),
    );
    hub.apply(11, &config_map("v1"));
    hub.apply(
        20,
        &crp_1(json!({
            "policy": {"placementType": "PickAll"},
            "resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "application-1", "version": "v1"}
            ],
            "strategy": {
                "type": strategy_type,
                "rollingUpdate": {"unavailablePeriodSeconds": 2}
            }
        })),
    );
    hub
}

pub(super) fn config_map(value: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app-config-1", "namespace": "application-1"},
        "data": {"key": value}
    })
}

pub(super) fn crp_key() -> ObjectKey {
    key("ClusterResourcePlacement", "", "crp-1")
}

pub(super) fn binding_name(hub: &Hub, cluster: &str) -> String {
    hub.state.placements()[&crp_key()]
        .bindings
        .get(cluster)
        .expect("a binding")
        .name("crp-1")
}

/// A condition at `seconds` after the seed's time (t=0 is 09:58:20).
pub(super) fn condition(
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    seconds: i64,
) -> Value {
    json!({
        "lastTransitionTime": super::at(seconds).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": kind
    })
}

pub(super) fn scheduled(cluster: &str) -> Value {
    condition(
        "Scheduled",
        "True",
        "Scheduled",
        &format!(
            "Successfully scheduled resources for placement in {cluster} (affinity score: 0, \
             topology spread score: 0): picked by scheduling policy"
        ),
        20,
    )
}

/// A cluster's conditions up to `WorkSynchronized`, bound at t=20s.
pub(super) fn synchronized(cluster: &str) -> Vec<Value> {
    vec![
        scheduled(cluster),
        condition(
            "RolloutStarted",
            "True",
            "RolloutStarted",
            "Detected the new changes on the resources and started the rollout process",
            20,
        ),
        condition(
            "Overridden",
            "True",
            "NoOverrideSpecified",
            "No override rules are configured for the selected resources",
            20,
        ),
        condition(
            "WorkSynchronized",
            "True",
            "AllWorkSynced",
            "All of the works are synchronized to the latest",
            20,
        ),
    ]
}

/// A cluster whose member reported the work applied and available, not trackable, at `at`.
fn untrackable(cluster: &str, at: i64) -> Value {
    let mut conditions = synchronized(cluster);
    conditions.push(condition(
        "Applied",
        "True",
        "AllWorkHaveBeenApplied",
        "All corresponding work objects are applied",
        at,
    ));
    conditions.push(condition(
        "Available",
        "True",
        "WorkNotTrackable",
        "The availability of work object crp-1-work is not trackable",
        at,
    ));
    json!({"clusterName": cluster, "conditions": conditions})
}

/// The placement's conditions from `RolloutStarted` through `WorkSynchronized`, all True.
pub(super) fn placement_synchronized() -> Vec<Value> {
    vec![
        condition(
            "ClusterResourcePlacementScheduled",
            "True",
            "SchedulingPolicyFulfilled",
            "found all the clusters needed as specified by the scheduling policy",
            20,
        ),
        condition(
            "ClusterResourcePlacementRolloutStarted",
            "True",
            "RolloutStarted",
            "All 3 cluster(s) start rolling out the latest resource",
            20,
        ),
        condition(
            "ClusterResourcePlacementOverridden",
            "True",
            "NoOverrideSpecified",
            "No override rules are configured for the selected resources",
            20,
        ),
        condition(
            "ClusterResourcePlacementWorkSynchronized",
            "True",
            "WorkSynchronized",
            "Works(s) are succcesfully created or updated in the 3 target clusters' namespaces",
            20,
        ),
    ]
}

fn selected_resources() -> Value {
    json!([
        {"kind": "Namespace", "name": "application-1", "version": "v1"},
        {"kind": "ConfigMap", "name": "app-config-1", "namespace": "application-1", "version": "v1"}
    ])
}

#[test]
fn three_untrackable_reports_give_the_seeds_placement_status() {
    let mut hub = seed_fleet("RollingUpdate");
    for (i, cluster) in (0_i64..).zip(CLUSTERS) {
        hub.report(30 + i, Report::untrackable(cluster, "crp-1"));
    }
    let mut conditions = placement_synchronized();
    conditions.push(condition(
        "ClusterResourcePlacementApplied",
        "True",
        "ApplySucceeded",
        "The selected resources are successfully applied to 3 clusters",
        32,
    ));
    conditions.push(condition(
        "ClusterResourcePlacementAvailable",
        "True",
        "ResourceAvailable",
        "The selected resources in 3 cluster are available now",
        32,
    ));
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    assert_eq!(
        object["status"],
        json!({
            "conditions": conditions,
            "observedResourceIndex": "0",
            "placementStatuses": [
                untrackable("kind-cluster-1", 30),
                untrackable("kind-cluster-2", 31),
                untrackable("kind-cluster-3", 32)
            ],
            "selectedResources": selected_resources()
        })
    );
    let name = binding_name(&hub, "kind-cluster-2");
    let binding =
        render_object(&hub.state, &key("ClusterResourceBinding", "", &name)).expect("derived");
    // The binding carries the same chain with its own generation (2: bound by the rollout).
    let chain: Vec<Value> = untrackable("kind-cluster-2", 31)["conditions"]
        .as_array()
        .map(|all| all[1..].to_vec())
        .unwrap_or_default()
        .into_iter()
        .map(|mut c| {
            c["observedGeneration"] = json!(2);
            c
        })
        .collect();
    assert_eq!(binding["status"], json!({"conditions": chain}));
    assert_eq!(binding["spec"]["state"], "Bound");
    assert_eq!(binding["spec"]["resourceSnapshotName"], "crp-1-0-snapshot");
    assert_eq!(
        binding["metadata"]["finalizers"],
        json!([
            "kubernetes-fleet.io/scheduler-crb-cleanup",
            "kubernetes-fleet.io/work-cleanup"
        ])
    );
    assert_eq!(binding["spec"]["applyStrategy"], default_apply_strategy());
}

#[test]
fn a_failed_apply_turns_applied_false_and_lists_the_failed_placement() {
    let mut hub = seed_fleet("RollingUpdate");
    hub.report(30, Report::untrackable("kind-cluster-1", "crp-1"));
    let message = "Failed to apply manifest: resource exists and is not managed by the fleet";
    hub.report(
        31,
        Report {
            applied: Some(false),
            available: None,
            message,
            ..Report::untrackable("kind-cluster-2", "crp-1")
        },
    );
    hub.report(32, Report::untrackable("kind-cluster-3", "crp-1"));
    let mut conditions = placement_synchronized();
    conditions.push(condition(
        "ClusterResourcePlacementApplied",
        "False",
        "ApplyFailed",
        "Failed to apply resources to 1 clusters, please check the `failedPlacements` status",
        31,
    ));
    let mut failed = synchronized("kind-cluster-2");
    failed.push(condition(
        "Applied",
        "False",
        "NotAllWorkHaveBeenApplied",
        "Work object crp-1-work is not applied",
        31,
    ));
    let failed_placements = json!([{
        "condition": {
            "lastTransitionTime": "2024-04-29T09:58:51Z",
            "message": message,
            "reason": "ManifestApplyFailed",
            "status": "False",
            "type": "Applied"
        }
    }]);
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    assert_eq!(
        object["status"],
        json!({
            "conditions": conditions,
            "observedResourceIndex": "0",
            "placementStatuses": [
                untrackable("kind-cluster-1", 30),
                {
                    "clusterName": "kind-cluster-2",
                    "conditions": failed,
                    "failedPlacements": failed_placements
                },
                untrackable("kind-cluster-3", 32)
            ],
            "selectedResources": selected_resources()
        })
    );
    let name = binding_name(&hub, "kind-cluster-2");
    let binding =
        render_object(&hub.state, &key("ClusterResourceBinding", "", &name)).expect("derived");
    assert_eq!(binding["status"]["failedPlacements"], failed_placements);
    assert_eq!(
        binding["status"]["conditions"][3],
        json!({
            "lastTransitionTime": "2024-04-29T09:58:51Z",
            "message": "Work object crp-1-work is not applied",
            "observedGeneration": 2,
            "reason": "NotAllWorkHaveBeenApplied",
            "status": "False",
            "type": "Applied"
        })
    );
    let work = render_object(&hub.state, &work_key("kind-cluster-2")).expect("derived");
    assert_eq!(
        work["status"],
        json!({"conditions": [
            {
                "lastTransitionTime": "2024-04-29T09:58:51Z",
                "message": message,
                "observedGeneration": 1,
                "reason": "WorkAppliedFailed",
                "status": "False",
                "type": "Applied"
            },
            {
                "lastTransitionTime": "2024-04-29T09:58:51Z",
                "message": "",
                "observedGeneration": 1,
                "reason": "WorkAppliedFailed",
                "status": "Unknown",
                "type": "Available"
            }
        ]})
    );
}

pub(super) fn work_key(cluster: &str) -> ObjectKey {
    key("Work", &format!("fleet-member-{cluster}"), "crp-1-work")
}

#[test]
fn each_bound_cluster_gets_a_work_with_the_placements_manifests() {
    let mut hub = seed_fleet("RollingUpdate");
    hub.report(30, Report::untrackable("kind-cluster-1", "crp-1"));
    let binding = binding_name(&hub, "kind-cluster-1");
    let placement_uid = uid(9);
    let null_hash = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b";
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "Work",
        "metadata": {
            "annotations": {
                "kubernetes-fleet.io/parent-cluster-resource-override-snapshot-hash": null_hash,
                "kubernetes-fleet.io/parent-resource-override-snapshot-hash": null_hash,
                "kubernetes-fleet.io/parent-resource-snapshot-name": "crp-1-0-snapshot"
            },
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "generation": 1,
            "labels": {
                "kubernetes-fleet.io/parent-CRP": "crp-1",
                "kubernetes-fleet.io/parent-resource-binding": binding,
                "kubernetes-fleet.io/parent-resource-snapshot-index": "0"
            },
            "name": "crp-1-work",
            "namespace": "fleet-member-kind-cluster-1",
            "ownerReferences": [{
                "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                "blockOwnerDeletion": true,
                "kind": "ClusterResourceBinding",
                "name": binding,
                "uid": derived_uid(&placement_uid, "ClusterResourceBinding", &binding)
            }],
            "resourceVersion": "6",
            "uid": derived_uid(&placement_uid, "Work", "fleet-member-kind-cluster-1/crp-1-work")
        },
        "spec": {
            "applyStrategy": default_apply_strategy(),
            "workload": {"manifests": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "application-1"}},
                {
                    "apiVersion": "v1",
                    "data": {"key": "v1"},
                    "kind": "ConfigMap",
                    "metadata": {"name": "app-config-1", "namespace": "application-1"}
                }
            ]}
        },
        "status": {"conditions": [
            {
                "lastTransitionTime": "2024-04-29T09:58:50Z",
                "message": "Work is applied successfully",
                "observedGeneration": 1,
                "reason": "WorkAppliedCompleted",
                "status": "True",
                "type": "Applied"
            },
            {
                "lastTransitionTime": "2024-04-29T09:58:50Z",
                "message": "Work's availability is not trackable",
                "observedGeneration": 1,
                "reason": "WorkNotTrackable",
                "status": "True",
                "type": "Available"
            }
        ]}
    });
    let key = work_key("kind-cluster-1");
    assert_eq!(render_object(&hub.state, &key), Some(expected.clone()));
    assert_eq!(works_for_cluster(&hub.state, "kind-cluster-1"), [expected]);
    assert!(works_for_cluster(&hub.state, "nowhere").is_empty());
    let kind = resolve_kind(&hub.state, "works").expect("known");
    assert_eq!(
        (kind.kind.as_str(), kind.namespaced),
        ("Work", true),
        "{kind:?}"
    );
    assert_eq!(list(&hub.state, &kind, None).len(), 3);
    assert_eq!(
        table(&hub.state, &kind, None, false),
        "NAMESPACE                     NAME         APPLIED   AVAILABLE   AGE\n\
         fleet-member-kind-cluster-1   crp-1-work   True      True        10s\n\
         fleet-member-kind-cluster-2   crp-1-work                         10s\n\
         fleet-member-kind-cluster-3   crp-1-work                         10s\n"
    );
    // render_all: each work follows its placement's bindings.
    let kinds: Vec<String> = render_all(&hub.state)
        .iter()
        .filter(|o| {
            o["apiVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("placement."))
        })
        .map(|o| o["kind"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "ClusterResourcePlacement",
            "ClusterSchedulingPolicySnapshot",
            "ClusterResourceSnapshot",
            "ClusterResourceBinding",
            "ClusterResourceBinding",
            "ClusterResourceBinding",
            "Work",
            "Work",
            "Work"
        ]
    );
}

#[test]
fn a_resource_placements_work_names_its_namespace() {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    hub.apply(10, &team_a_config_map("settings", "on"));
    hub.apply(20, &team_a_placement());
    let works = works_for_cluster(&hub.state, "member1");
    assert_eq!(works.len(), 1);
    let binding = hub.state.placements()[&key("ResourcePlacement", "team-a", "app")]
        .bindings
        .get("member1")
        .expect("a binding")
        .name("app");
    assert_eq!(works[0]["metadata"]["name"], "team-a.app-work");
    assert_eq!(
        works[0]["metadata"]["labels"],
        json!({
            "kubernetes-fleet.io/parent-CRP": "app",
            "kubernetes-fleet.io/parent-placement-namespace": "team-a",
            "kubernetes-fleet.io/parent-resource-binding": binding,
            "kubernetes-fleet.io/parent-resource-snapshot-index": "0"
        })
    );
    assert_eq!(
        works[0]["metadata"]["ownerReferences"][0]["kind"],
        "ResourceBinding"
    );
    let found = render_object(
        &hub.state,
        &key("Work", "fleet-member-member1", "team-a.app-work"),
    );
    assert_eq!(found.as_ref(), works.first());
}

/// Schema 2 reports name the failing manifests: each becomes a `failedPlacements` entry with
/// the resource's identity, as KubeFleet lists them (only the failed condition's manifests).
#[test]
fn failed_manifests_are_listed_with_their_resource_identity() {
    use flotilla_core::{Input, ManifestCondition, ManifestFailure, WorkReport};
    let mut hub = seed_fleet("RollingUpdate");
    let failure = |kind: &str, name: &str, condition, message: &str| ManifestFailure {
        group: String::new(),
        version: "v1".into(),
        kind: kind.into(),
        namespace: if kind == "Namespace" {
            String::new()
        } else {
            "application-1".into()
        },
        name: name.into(),
        condition,
        message: message.into(),
        reason: None,
    };
    hub.fold(
        31,
        "agent/kind-cluster-2",
        Input::WorkReport(WorkReport {
            cluster: "kind-cluster-2".into(),
            placement: "crp-1".into(),
            namespace: None,
            resource_index: 0,
            applied: Some(false),
            available: None,
            trackable: true,
            message: "1 of 2 manifests failed to apply".into(),
            failed_manifests: vec![
                failure(
                    "ConfigMap",
                    "app-config-1",
                    ManifestCondition::Applied,
                    "resource exists and is not managed by the fleet",
                ),
                failure(
                    "Namespace",
                    "application-1",
                    ManifestCondition::Available,
                    "",
                ),
            ],
            differences: flotilla_core::Differences::default(),
        }),
    );
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    let statuses = object["status"]["placementStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let cluster = statuses
        .iter()
        .find(|s| s["clusterName"] == "kind-cluster-2")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        cluster["failedPlacements"],
        json!([{
            "condition": {
                "lastTransitionTime": "2024-04-29T09:58:51Z",
                "message": "resource exists and is not managed by the fleet",
                "reason": "ManifestApplyFailed",
                "status": "False",
                "type": "Applied"
            },
            "kind": "ConfigMap",
            "name": "app-config-1",
            "namespace": "application-1",
            "version": "v1"
        }])
    );
}
