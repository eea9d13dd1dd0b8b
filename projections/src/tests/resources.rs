//! Proves hub resources render as their stored content under the hub's metadata, and that
//! `render_all` and `list` are complete and ordered.

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::{Hub, crp_1, member_cluster, sample_heartbeat, test_namespace, uid};
use crate::{list, render_all, render_object, resolve_kind};

fn config_map() -> Value {
    // KubeFleet's ConfigMap in the ClusterResourceSnapshot sample.
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "test-1", "namespace": "test"},
        "data": {"key1": "value1", "key2": "value2", "key3": "value3"}
    })
}

/// A small fleet: two clusters, a namespace, two config maps and a placement.
fn fleet() -> Hub {
    let mut hub = Hub::new();
    for (n, name) in ["member2", "member1"].into_iter().enumerate() {
        let seconds = i64::try_from(n).expect("small");
        hub.apply(seconds, &member_cluster(name));
    }
    hub.apply(10, &test_namespace());
    hub.apply(20, &config_map());
    let mut other = config_map();
    other["metadata"] = json!({"name": "app", "namespace": "other"});
    hub.apply(25, &other);
    hub.apply(
        30,
        &crp_1(json!({
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test"}]
        })),
    );
    hub.heartbeat(40, sample_heartbeat("member1"));
    hub
}

#[test]
fn a_config_map_renders_its_data_under_the_hubs_metadata() {
    let mut hub = Hub::new();
    hub.apply(0, &config_map());
    let key = ObjectKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "test".into(),
        name: "test-1".into(),
    };
    let expected = json!({
        "apiVersion": "v1",
        "data": {"key1": "value1", "key2": "value2", "key3": "value3"},
        "kind": "ConfigMap",
        "metadata": {
            "creationTimestamp": "2024-04-29T09:58:20Z",
            "generation": 1,
            "name": "test-1",
            "namespace": "test",
            "resourceVersion": "1",
            "uid": uid(1)
        }
    });
    assert_eq!(render_object(&hub.state, &key), Some(expected.clone()));
    assert_eq!(
        serde_json::to_string(&expected).expect("json"),
        serde_json::to_string(&render_object(&hub.state, &key)).expect("json")
    );
}

#[test]
fn an_update_keeps_uid_and_creation_and_bumps_versions() {
    let mut hub = Hub::new();
    hub.apply(0, &config_map());
    let mut changed = config_map();
    changed["data"]["key1"] = json!("changed");
    changed["metadata"]["annotations"] = json!({"note": "x"});
    hub.apply(60, &changed);
    let key = ObjectKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "test".into(),
        name: "test-1".into(),
    };
    let object = render_object(&hub.state, &key).expect("stored");
    assert_eq!(object["metadata"]["uid"], json!(uid(1)));
    assert_eq!(
        object["metadata"]["creationTimestamp"],
        "2024-04-29T09:58:20Z"
    );
    assert_eq!(object["metadata"]["resourceVersion"], "2");
    assert_eq!(object["metadata"]["generation"], 2);
    assert_eq!(object["metadata"]["annotations"], json!({"note": "x"}));
    assert_eq!(object["data"]["key1"], "changed");
}

#[test]
fn render_all_orders_members_then_resources_then_placements_with_what_they_derive() {
    let hub = fleet();
    let crp = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        "crp-1",
    );
    let binding = format!(
        "ClusterResourceBinding/{}",
        hub.state.placements()[&crp]
            .bindings
            .get("member1")
            .expect("a binding")
            .name("crp-1")
    );
    let names: Vec<String> = render_all(&hub.state)
        .iter()
        .map(|object| {
            format!(
                "{}/{}",
                object["kind"].as_str().unwrap_or(""),
                object["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "MemberCluster/member1",
            "MemberCluster/member2",
            "ConfigMap/app",
            "ConfigMap/test-1",
            "Namespace/test",
            "ClusterResourcePlacement/crp-1",
            "ClusterSchedulingPolicySnapshot/crp-1-0",
            "ClusterResourceSnapshot/crp-1-0-snapshot",
            binding.as_str(),
            "Work/crp-1-work",
        ]
    );
    assert_eq!(render_all(&hub.state), render_all(&hub.state.clone()));
}

#[test]
fn list_filters_by_kind_and_namespace() {
    let hub = fleet();
    let config_maps = resolve_kind(&hub.state, "cm").expect("known");
    assert_eq!(list(&hub.state, &config_maps, None).len(), 2);
    let in_test = list(&hub.state, &config_maps, Some("test"));
    assert_eq!(in_test.len(), 1);
    assert_eq!(in_test[0]["metadata"]["name"], "test-1");
    // A namespace filter does not apply to cluster-scoped kinds.
    let clusters = resolve_kind(&hub.state, "memberclusters").expect("known");
    assert_eq!(list(&hub.state, &clusters, Some("test")).len(), 2);
    let secrets = resolve_kind(&hub.state, "secrets").expect("known");
    assert!(list(&hub.state, &secrets, None).is_empty());
}

#[test]
fn placed_objects_lose_the_hubs_own_annotations_and_status_as_kubefleet_strips_them() {
    let mut hub = Hub::new();
    super::join(&mut hub, 0, "member1", &json!({}));
    hub.apply(
        1,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}",
                "team": "blue"}}}),
    );
    hub.apply(
        2,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "app",
                "annotations": {"deployment.kubernetes.io/revision": "3"}},
            "spec": {"replicas": 1}, "status": {"replicas": 1}}),
    );
    hub.apply(
        3,
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1", "kind": "ClusterResourcePlacement",
            "metadata": {"name": "app"},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace",
                "name": "app"}], "policy": {"placementType": "PickAll"}}}),
    );
    let works = crate::works_for_cluster(&hub.state, "member1");
    let manifests = works[0]["spec"]["workload"]["manifests"].clone();
    assert_eq!(
        manifests[0]["metadata"]["annotations"],
        json!({"team": "blue"}),
        "{manifests}"
    );
    assert_eq!(manifests[1]["kind"], "Deployment", "{manifests}");
    assert!(
        manifests[1]["metadata"].get("annotations").is_none(),
        "{manifests}"
    );
    assert!(manifests[1].get("status").is_none(), "{manifests}");
}
