//! Proves the objects KubeFleet derives from a `ClusterResourcePlacement` (policy snapshot,
//! resource snapshot, bindings) and the placement's status render in KubeFleet's exact shape,
//! and that `render_all`, `list` and `render_object` find them.

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::placement::default_apply_strategy;
use super::placement_status::{bound_at_once, picked};
use super::{Hub, at_20, crp_1, join, policy_fulfilled, test_namespace, uid};
use crate::derived::derived_uid;
use crate::{list, render_all, render_object, resolve_kind};

const GROUP: &str = "placement.kubernetes-fleet.io";

pub(super) fn key(kind: &str, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey {
        group: GROUP.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

/// Three joined clusters (member1 and member2 `env=prod`, member3 `env=test`), the seed's
/// namespace `test` with a ConfigMap, and `crp-1`: PickN 2, preferring `env=prod` (weight 20).
/// Events: members 1–6, namespace 7, ConfigMap 8, placement 9 (at t=20s, resourceVersion 6).
fn pick_two_of_three() -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({"env": "prod"}));
    join(&mut hub, 2, "member2", &json!({"env": "prod"}));
    join(&mut hub, 4, "member3", &json!({"env": "test"}));
    hub.apply(10, &test_namespace());
    hub.apply(
        11,
        &json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "test-1", "namespace": "test"},
            "data": {"key1": "value1", "key2": "value2"}
        }),
    );
    hub.apply(
        20,
        &crp_1(json!({
            "resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "test", "version": "v1"}
            ],
            "policy": {
                "placementType": "PickN",
                "numberOfClusters": 2,
                "affinity": {"clusterAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 20, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
                    ]
                }}
            }
        })),
    );
    hub
}

fn crp_key() -> ObjectKey {
    key("ClusterResourcePlacement", "", "crp-1")
}

/// What core computed and projections only copies: the binding name of `cluster`, the policy
/// hash and the resource hash.
fn binding_name(hub: &Hub, cluster: &str) -> String {
    hub.state.placements()[&crp_key()]
        .bindings
        .get(cluster)
        .expect("a binding")
        .name("crp-1")
}

fn owner_reference() -> Value {
    json!([{
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": "ClusterResourcePlacement",
        "name": "crp-1",
        "uid": uid(9)
    }])
}

fn prod_affinity() -> Value {
    json!({"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}, "weight": 20}
    ]}})
}

#[test]
fn the_policy_snapshot_lists_picked_then_unpicked_clusters_with_priority_scores() {
    let hub = pick_two_of_three();
    let policy_hash = hub.state.placements()[&crp_key()].policy_snapshots[0]
        .policy_hash
        .clone();
    let kind = "ClusterSchedulingPolicySnapshot";
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": kind,
        "metadata": {
            "annotations": {
                "kubernetes-fleet.io/CRP-generation": "1",
                "kubernetes-fleet.io/number-of-clusters": "2"
            },
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "generation": 1,
            "labels": {
                "kubernetes-fleet.io/is-latest-snapshot": "true",
                "kubernetes-fleet.io/parent-CRP": "crp-1",
                "kubernetes-fleet.io/policy-index": "0"
            },
            "name": "crp-1-0",
            "ownerReferences": owner_reference(),
            "resourceVersion": "6",
            "uid": derived_uid(&uid(9), kind, "crp-1-0")
        },
        "spec": {
            "policy": {
                "affinity": prod_affinity(),
                "numberOfClusters": 2,
                "placementType": "PickN"
            },
            "policyHash": policy_hash
        },
        "status": {
            "conditions": [policy_fulfilled()],
            "observedCRPGeneration": 1,
            "targetClusters": [
                {
                    "clusterName": "member1",
                    "clusterScore": {"affinityScore": 20, "priorityScore": 0},
                    "reason": "picked by scheduling policy",
                    "selected": true
                },
                {
                    "clusterName": "member2",
                    "clusterScore": {"affinityScore": 20, "priorityScore": 0},
                    "reason": "picked by scheduling policy",
                    "selected": true
                },
                {
                    "clusterName": "member3",
                    "clusterScore": {"affinityScore": 0, "priorityScore": 0},
                    "reason": "cluster does not score high enough",
                    "selected": false
                }
            ]
        }
    });
    assert_eq!(
        render_object(&hub.state, &key(kind, "", "crp-1-0")),
        Some(expected)
    );
}

#[test]
fn bindings_carry_the_decision_the_snapshot_names_and_the_rollouts_progress() {
    let hub = pick_two_of_three();
    let name = binding_name(&hub, "member1");
    assert!(name.starts_with("crp-1-member1-"), "{name}");
    let kind = "ClusterResourceBinding";
    // Scheduled, then bound to the resource snapshot by the rollout in the same step
    // (generation 2); the work generator's finalizer follows the scheduler's.
    let progress = |kind: &str, reason: &str, message: &str| {
        json!({
            "lastTransitionTime": "2024-04-29T09:58:40Z",
            "message": message,
            "observedGeneration": 2,
            "reason": reason,
            "status": "True",
            "type": kind
        })
    };
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": kind,
        "metadata": {
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "finalizers": [
                "kubernetes-fleet.io/scheduler-crb-cleanup",
                "kubernetes-fleet.io/work-cleanup"
            ],
            "generation": 2,
            "labels": {"kubernetes-fleet.io/parent-CRP": "crp-1"},
            "name": name,
            "resourceVersion": "6",
            "uid": derived_uid(&uid(9), kind, &name)
        },
        "spec": {
            "applyStrategy": default_apply_strategy(),
            "clusterDecision": {
                "clusterName": "member1",
                "clusterScore": {"affinityScore": 20, "priorityScore": 0},
                "reason": "picked by scheduling policy",
                "selected": true
            },
            "resourceSnapshotName": "crp-1-0-snapshot",
            "schedulingPolicySnapshotName": "crp-1-0",
            "state": "Bound",
            "targetCluster": "member1"
        },
        "status": {"conditions": [
            progress(
                "RolloutStarted",
                "RolloutStarted",
                "Detected the new changes on the resources and started the rollout process"
            ),
            progress(
                "Overridden",
                "NoOverrideSpecified",
                "No override rules are configured for the selected resources"
            ),
            progress(
                "WorkSynchronized",
                "AllWorkSynced",
                "All of the works are synchronized to the latest"
            )
        ]}
    });
    assert_eq!(
        render_object(&hub.state, &key(kind, "", &name)),
        Some(expected)
    );
    let bindings = list(
        &hub.state,
        &resolve_kind(&hub.state, "crb").expect("known"),
        None,
    );
    let targets: Vec<&Value> = bindings
        .iter()
        .map(|b| &b["spec"]["targetCluster"])
        .collect();
    assert_eq!(targets, [&json!("member1"), &json!("member2")]);
}

#[test]
fn the_resource_snapshot_holds_the_selected_manifests_in_apply_order() {
    let hub = pick_two_of_three();
    let resource_hash = hub.state.placements()[&crp_key()].resource_snapshots[0]
        .resource_hash
        .clone();
    let kind = "ClusterResourceSnapshot";
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": kind,
        "metadata": {
            "annotations": {
                "kubernetes-fleet.io/number-of-enveloped-object": "0",
                "kubernetes-fleet.io/number-of-resource-snapshots": "1",
                "kubernetes-fleet.io/resource-hash": resource_hash
            },
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "generation": 1,
            "labels": {
                "kubernetes-fleet.io/is-latest-snapshot": "true",
                "kubernetes-fleet.io/parent-CRP": "crp-1",
                "kubernetes-fleet.io/resource-index": "0"
            },
            "name": "crp-1-0-snapshot",
            "ownerReferences": owner_reference(),
            "resourceVersion": "6",
            "uid": derived_uid(&uid(9), kind, "crp-1-0-snapshot")
        },
        "spec": {
            "selectedResources": [
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "labels": {"kubernetes.io/metadata.name": "test"},
                        "name": "test"
                    },
                    "spec": {"finalizers": ["kubernetes"]}
                },
                {
                    "apiVersion": "v1",
                    "data": {"key1": "value1", "key2": "value2"},
                    "kind": "ConfigMap",
                    "metadata": {"name": "test-1", "namespace": "test"}
                }
            ]
        }
    });
    assert_eq!(
        render_object(&hub.state, &key(kind, "", "crp-1-0-snapshot")),
        Some(expected)
    );
}

#[test]
fn the_placement_status_reports_the_condition_resources_and_each_picked_cluster() {
    let hub = pick_two_of_three();
    // Bound by the rollout at once; no member has reported on its work yet.
    let expected = json!({
        "conditions": bound_at_once(
            at_20(
                "ClusterResourcePlacementScheduled",
                "True",
                "SchedulingPolicyFulfilled",
                "found all the clusters needed as specified by the scheduling policy"
            ),
            2
        ),
        "observedResourceIndex": "0",
        "placementStatuses": [
            picked("member1", Some((20, 0))),
            picked("member2", Some((20, 0)))
        ],
        "selectedResources": [
            {"kind": "Namespace", "name": "test", "version": "v1"},
            {"kind": "ConfigMap", "name": "test-1", "namespace": "test", "version": "v1"}
        ]
    });
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    assert_eq!(object["status"], expected);
}

#[test]
fn render_all_puts_each_placements_derived_objects_after_it() {
    let hub = pick_two_of_three();
    let names: Vec<String> = render_all(&hub.state)
        .iter()
        .map(|object| {
            format!(
                "{}/{}",
                object["kind"].as_str().unwrap_or_default(),
                object["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let binding = |cluster| format!("ClusterResourceBinding/{}", binding_name(&hub, cluster));
    assert_eq!(
        names,
        [
            "MemberCluster/member1".to_owned(),
            "MemberCluster/member2".to_owned(),
            "MemberCluster/member3".to_owned(),
            "ConfigMap/test-1".to_owned(),
            "Namespace/test".to_owned(),
            "ClusterResourcePlacement/crp-1".to_owned(),
            "ClusterSchedulingPolicySnapshot/crp-1-0".to_owned(),
            "ClusterResourceSnapshot/crp-1-0-snapshot".to_owned(),
            binding("member1"),
            binding("member2"),
            "Work/crp-1-work".to_owned(),
            "Work/crp-1-work".to_owned(),
        ]
    );
    // Each derived object renders the same through `render_object` and `render_all`.
    for object in render_all(&hub.state) {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if (kind.starts_with("Cluster") && kind != "ClusterResourcePlacement") || kind == "Work" {
            assert_eq!(
                render_object(&hub.state, &key(kind, namespace, name)).as_ref(),
                Some(&object)
            );
        }
    }
}

#[test]
fn derived_objects_are_found_only_under_their_own_kind_and_scope() {
    let hub = pick_two_of_three();
    let state = &hub.state;
    assert!(
        render_object(
            state,
            &key("ClusterSchedulingPolicySnapshot", "", "crp-1-0")
        )
        .is_some()
    );
    assert_eq!(
        render_object(
            state,
            &key("ClusterSchedulingPolicySnapshot", "", "crp-1-1")
        ),
        None
    );
    assert_eq!(
        render_object(state, &key("ClusterResourceSnapshot", "", "crp-1-0")),
        None
    );
    assert_eq!(
        render_object(state, &key("SchedulingPolicySnapshot", "", "crp-1-0")),
        None
    );
    assert_eq!(
        render_object(
            state,
            &key("ClusterSchedulingPolicySnapshot", "x", "crp-1-0")
        ),
        None
    );
    assert_eq!(
        render_object(
            state,
            &key("ClusterResourcePlacementStatus", "test", "crp-1")
        ),
        None
    );
    let snapshots = resolve_kind(state, "csps").expect("known");
    assert_eq!(list(state, &snapshots, Some("anything")).len(), 1);
    let namespaced = resolve_kind(state, "sps").expect("known");
    assert!(list(state, &namespaced, None).is_empty());
}

#[test]
fn a_v1beta1_placement_derives_v1beta1_objects() {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    hub.apply(
        10,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "web"},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}]}
        }),
    );
    let all = render_all(&hub.state);
    let derived: Vec<&Value> = all
        .iter()
        .filter(|o| o["kind"] != "MemberCluster" && o["kind"] != "ClusterResourcePlacement")
        .collect();
    // Policy snapshot, resource snapshot, binding, and the binding's work (no manifests: the
    // namespace does not exist, yet the member still reports on it).
    assert_eq!(derived.len(), 4, "{derived:?}");
    for object in derived {
        assert_eq!(
            object["apiVersion"],
            "placement.kubernetes-fleet.io/v1beta1"
        );
        if let Some(owners) = object["metadata"].get("ownerReferences") {
            assert_eq!(
                owners[0]["apiVersion"],
                "placement.kubernetes-fleet.io/v1beta1"
            );
        }
    }
}

#[test]
fn a_binding_of_a_long_named_placement_is_found_by_its_cut_name() {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    let name = "a-placement-name-longer-than-twenty-six-characters";
    hub.apply(
        10,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": name},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "x"}]}
        }),
    );
    let placement = &hub.state.placements()[&key("ClusterResourcePlacement", "", name)];
    let binding = placement
        .bindings
        .get("member1")
        .expect("a binding")
        .name(name);
    assert!(!binding.starts_with(name), "{binding}");
    let object = render_object(&hub.state, &key("ClusterResourceBinding", "", &binding));
    assert_eq!(
        object.map(|o| o["metadata"]["labels"].clone()),
        Some(json!({"kubernetes-fleet.io/parent-CRP": name}))
    );
}
