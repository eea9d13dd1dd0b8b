//! Proves `describe` follows kubectl's layout for custom resources, as in the seed's
//! `kubectl describe crp` sample.

use flotilla_core::model::ObjectKey;
use serde_json::json;

use super::{Hub, sample_heartbeat};
use crate::describe;

#[test]
fn a_placement_reads_like_the_seeds_kubectl_describe_crp() {
    let mut hub = Hub::new();
    // The spec of seed 002's `kubectl describe crp` sample.
    hub.apply(
        0,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp-1"},
            "spec": {
                "policy": {"placementType": "PickAll"},
                "resourceSelectors": [
                    {"group": "", "kind": "Namespace", "name": "application-1", "version": "v1"}
                ],
                "revisionHistoryLimit": 10,
                "strategy": {
                    "rollingUpdate": {
                        "maxSurge": "25%",
                        "maxUnavailable": "25%",
                        "unavailablePeriodSeconds": 2
                    },
                    "type": "RollingUpdate"
                }
            }
        }),
    );
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        "crp-1",
    );
    assert_eq!(describe(&hub.state, &key).expect("stored"), "PLACEHOLDER");
}

#[test]
fn a_member_cluster_shows_labels_spec_and_status() {
    let mut hub = Hub::new();
    hub.apply(0, &json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {
            "name": "member1",
            "labels": {"environment": "staging", "region": "east"},
            "annotations": {"note": "first"}
        },
        "spec": {
            "identity": {"kind": "User", "name": "member1", "apiGroup": "rbac.authorization.k8s.io"},
            "heartbeatPeriodSeconds": 30
        }
    }));
    hub.heartbeat(30, sample_heartbeat("member1"));
    let key = ObjectKey::cluster_scoped("cluster.kubernetes-fleet.io", "MemberCluster", "member1");
    assert_eq!(describe(&hub.state, &key).expect("stored"), "PLACEHOLDER");
}

#[test]
fn a_namespaced_resource_names_its_namespace_and_missing_objects_are_none() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app-config-1", "namespace": "application-1"},
            "data": {"config.yaml": "a: 1\nb: 2\n"}
        }),
    );
    let key = ObjectKey {
        group: String::new(),
        kind: "ConfigMap".into(),
        namespace: "application-1".into(),
        name: "app-config-1".into(),
    };
    assert_eq!(describe(&hub.state, &key).expect("stored"), "PLACEHOLDER");
    let missing = ObjectKey {
        name: "nope".into(),
        ..key
    };
    assert_eq!(describe(&hub.state, &missing), None);
}
