//! Proves placements render with KubeFleet's webhook defaults, as written otherwise, with the
//! scheduling status (the detailed status cases are in `placement_status.rs`).

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::{Hub, crp_1, uid};
use crate::render_object;

fn crp_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        name,
    )
}

/// The webhook's `applyStrategy` defaults.
pub(super) fn default_apply_strategy() -> Value {
    json!({
        "comparisonOption": "PartialComparison",
        "serverSideApplyConfig": {"force": false},
        "type": "ClientSideApply",
        "whenToApply": "Always",
        "whenToTakeOver": "Always"
    })
}

#[test]
fn the_seed_sample_renders_with_its_values_and_the_defaults() {
    let mut hub = Hub::new();
    // KubeFleet's "A simple ClusterResourcePlacement looks like this".
    hub.apply(
        0,
        &crp_1(json!({
            "policy": {
                "placementType": "PickN",
                "numberOfClusters": 2,
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "env", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            "resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "test-deployment", "version": "v1"}
            ],
            "revisionHistoryLimit": 100,
            "strategy": {
                "rollingUpdate": {
                    "maxSurge": "25%",
                    "maxUnavailable": "25%",
                    "unavailablePeriodSeconds": 5
                },
                "type": "RollingUpdate"
            }
        })),
    );
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {
            "creationTimestamp": "2024-04-29T09:58:20Z",
            "generation": 1,
            "name": "crp-1",
            "resourceVersion": "1",
            "uid": uid(1)
        },
        "spec": {
            "policy": {
                "numberOfClusters": 2,
                "placementType": "PickN",
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "env", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            "resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "test-deployment", "version": "v1"}
            ],
            "revisionHistoryLimit": 100,
            "strategy": {
                "applyStrategy": default_apply_strategy(),
                "rollingUpdate": {
                    "maxSurge": "25%",
                    "maxUnavailable": "25%",
                    "unavailablePeriodSeconds": 5
                },
                "type": "RollingUpdate"
            }
        },
        // No member cluster: PickN finds none; the named namespace does not exist, so the
        // first resource snapshot is empty.
        "status": {
            "conditions": [{
                "lastTransitionTime": "2024-04-29T09:58:20Z",
                "message": "could not find all clusters needed as specified by the scheduling \
                            policy, found 0 cluster(s) instead",
                "observedGeneration": 1,
                "reason": "SchedulingPolicyUnfulfilled",
                "status": "False",
                "type": "ClusterResourcePlacementScheduled"
            }],
            "observedResourceIndex": "0"
        }
    });
    assert_eq!(render_object(&hub.state, &crp_key("crp-1")), Some(expected));
}

#[test]
fn an_omitted_policy_and_strategy_show_kubefleets_defaults() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "web", "labels": {"team": "a"}},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace"}]}
        }),
    );
    let object = render_object(&hub.state, &crp_key("web")).expect("stored");
    assert_eq!(
        object["apiVersion"],
        "placement.kubernetes-fleet.io/v1beta1"
    );
    assert_eq!(object["metadata"]["labels"], json!({"team": "a"}));
    assert_eq!(
        object["spec"],
        json!({
            "policy": {"placementType": "PickAll"},
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1"}],
            "revisionHistoryLimit": 10,
            "strategy": {
                "applyStrategy": default_apply_strategy(),
                "rollingUpdate": {
                    "maxSurge": "25%",
                    "maxUnavailable": "25%",
                    "unavailablePeriodSeconds": 60
                },
                "type": "RollingUpdate"
            }
        })
    );
}

#[test]
fn int_or_percent_and_tolerations_render_as_written() {
    let mut hub = Hub::new();
    hub.apply(0, &json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
            "policy": {
                "placementType": "PickAll",
                "tolerations": [{"key": "maintenance", "operator": "Exists"}]
            },
            "strategy": {
                "rollingUpdate": {"maxUnavailable": 3},
                "applyStrategy": {"type": "ServerSideApply", "allowCoOwnership": true}
            }
        }
    }));
    let spec = render_object(&hub.state, &crp_key("web")).expect("stored")["spec"].clone();
    assert_eq!(
        spec["policy"]["tolerations"],
        json!([{"key": "maintenance", "operator": "Exists"}])
    );
    assert_eq!(
        spec["strategy"]["rollingUpdate"]["maxUnavailable"],
        json!(3)
    );
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], json!("25%"));
    assert_eq!(spec["strategy"]["applyStrategy"]["type"], "ServerSideApply");
    assert_eq!(
        spec["strategy"]["applyStrategy"]["allowCoOwnership"],
        json!(true)
    );
}

#[test]
fn an_external_strategy_has_no_rolling_update_defaults() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ResourcePlacement",
            "metadata": {"name": "app", "namespace": "team-a"},
            "spec": {
                "resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap"}],
                "strategy": {"type": "External"}
            }
        }),
    );
    let key = ObjectKey {
        group: "placement.kubernetes-fleet.io".into(),
        kind: "ResourcePlacement".into(),
        namespace: "team-a".into(),
        name: "app".into(),
    };
    let object = render_object(&hub.state, &key).expect("stored");
    assert_eq!(object["metadata"]["namespace"], "team-a");
    assert_eq!(
        object["spec"]["strategy"],
        json!({"applyStrategy": default_apply_strategy(), "type": "External"})
    );
    // PickAll with no member cluster is fulfilled (KubeFleet: "found 0 cluster(s)").
    assert_eq!(
        object["status"],
        json!({
            "conditions": [{
                "lastTransitionTime": "2024-04-29T09:58:20Z",
                "message": "found all the clusters needed as specified by the scheduling policy",
                "observedGeneration": 1,
                "reason": "SchedulingPolicyFulfilled",
                "status": "True",
                "type": "ResourcePlacementScheduled"
            }],
            "observedResourceIndex": "0"
        })
    );
}
