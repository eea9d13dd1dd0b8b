//! Proves envelopes are unwrapped into the member's Work: an envelope ConfigMap's YAML entries
//! and a `ResourceEnvelope`'s objects take the wrapper's place (sorted as KubeFleet sorts them),
//! overrides apply to the objects inside, and a malformed entry leaves no work and a binding whose
//! `WorkSynchronized` condition names the envelope and entry.

use serde_json::{Value, json};

use super::{Hub, join};
use crate::{render_all, works_for_cluster};

const QUOTA_YAML: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: mem-cpu-demo\n  \
                          namespace: app\nspec:\n  hard:\n    pods: \"2\"\n";

fn envelope_config_map(data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "envelope-configmap",
            "namespace": "app",
            "annotations": {"kubernetes-fleet.io/envelope-configmap": "true"}
        },
        "data": data
    })
}

fn resource_envelope() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourceEnvelope",
        "metadata": {"name": "policies", "namespace": "app"},
        "data": {
            "np.yaml": {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": "deny-all", "namespace": "app"},
                "spec": {"podSelector": {}}
            }
        }
    })
}

/// One joined cluster, the namespace `app` with `objects`, and a PickAll placement of it.
fn fleet(objects: &[Value]) -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member-1", &json!({}));
    hub.apply(
        5,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}),
    );
    for object in objects {
        hub.apply(6, object);
    }
    hub.apply(
        10,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "app", "version": "v1"}
            ]}
        }),
    );
    hub
}

fn manifests(hub: &Hub) -> Vec<Value> {
    let works = works_for_cluster(&hub.state, "member-1");
    assert_eq!(works.len(), 1, "one work per binding: {works:?}");
    works[0]["spec"]["workload"]["manifests"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn identity(manifest: &Value) -> (String, String) {
    (
        manifest["kind"].as_str().unwrap_or_default().to_owned(),
        manifest["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn the_work_carries_the_objects_of_envelopes_instead_of_the_wrappers() {
    let hub = fleet(&[
        envelope_config_map(json!({"resourceQuota.yaml": QUOTA_YAML})),
        resource_envelope(),
    ]);
    let placed = manifests(&hub);
    let kinds: Vec<(String, String)> = placed.iter().map(identity).collect();
    assert_eq!(
        kinds,
        vec![
            ("Namespace".to_owned(), "app".to_owned()),
            ("ResourceQuota".to_owned(), "mem-cpu-demo".to_owned()),
            ("NetworkPolicy".to_owned(), "deny-all".to_owned()),
        ]
    );
    assert_eq!(placed[1]["spec"]["hard"]["pods"], "2");
    assert_eq!(placed[2]["spec"], json!({"podSelector": {}}));
}

#[test]
fn an_envelope_holding_several_objects_sorts_them_by_their_json_descending() {
    let second = QUOTA_YAML.replace("mem-cpu-demo", "zz-quota");
    let hub = fleet(&[envelope_config_map(
        json!({"a.yaml": QUOTA_YAML, "b.yaml": second}),
    )]);
    let names: Vec<String> = manifests(&hub)[1..].iter().map(|m| identity(m).1).collect();
    assert_eq!(
        names,
        vec!["zz-quota".to_owned(), "mem-cpu-demo".to_owned()]
    );
}

#[test]
fn overrides_apply_to_the_objects_inside_an_envelope() {
    let mut hub = fleet(&[resource_envelope()]);
    hub.apply(
        20,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
            "kind": "ResourceOverride",
            "metadata": {"name": "label-np", "namespace": "app"},
            "spec": {
                "resourceSelectors": [{
                    "group": "networking.k8s.io", "version": "v1",
                    "kind": "NetworkPolicy", "name": "deny-all"
                }],
                "policy": {"overrideRules": [{
                    "clusterSelector": {"clusterSelectorTerms": []},
                    "jsonPatchOverrides": [{
                        "op": "add", "path": "/metadata/labels", "value": {"from": "ro"}
                    }]
                }]}
            }
        }),
    );
    // The override comes after the bind: a new placement takes it from the start.
    hub.apply(
        21,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp2"},
            "spec": {"resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "app", "version": "v1"}
            ]}
        }),
    );
    let works = works_for_cluster(&hub.state, "member-1");
    let work = works
        .iter()
        .find(|w| w["metadata"]["name"] == "crp2-work")
        .expect("crp2's work");
    let policy = &work["spec"]["workload"]["manifests"][1];
    assert_eq!(identity(policy).0, "NetworkPolicy");
    assert_eq!(policy["metadata"]["labels"], json!({"from": "ro"}));
}

#[test]
fn a_malformed_envelope_leaves_no_work_and_says_which_entry() {
    let hub = fleet(&[envelope_config_map(
        json!({"good.yaml": QUOTA_YAML, "bad.yaml": "just some text"}),
    )]);
    assert!(works_for_cluster(&hub.state, "member-1").is_empty());
    let bindings: Vec<Value> = render_all(&hub.state)
        .into_iter()
        .filter(|object| object["kind"] == "ClusterResourceBinding")
        .collect();
    let conditions = bindings[0]["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let synced = conditions
        .iter()
        .find(|c| c["type"] == "WorkSynchronized")
        .expect("a WorkSynchronized condition");
    assert_eq!(synced["status"], "False");
    assert_eq!(synced["reason"], "SyncWorkFailed");
    assert_eq!(
        synced["message"],
        "Failed to synchronize the work to the latest: envelope \
         ConfigMap/app/envelope-configmap, data entry \"bad.yaml\": the value is not an object \
         manifest"
    );
    let overridden = conditions
        .iter()
        .find(|c| c["type"] == "Overridden")
        .expect("an Overridden condition");
    assert_eq!(overridden["reason"], "NoOverrideSpecified");
}

#[test]
fn an_object_of_another_scope_or_namespace_is_refused() {
    let mut envelope = resource_envelope();
    envelope["data"]["np.yaml"]["metadata"]["namespace"] = json!("other");
    let hub = fleet(&[envelope]);
    assert!(works_for_cluster(&hub.state, "member-1").is_empty());
    let mut cluster_envelope = resource_envelope();
    cluster_envelope["kind"] = json!("ClusterResourceEnvelope");
    cluster_envelope["metadata"] = json!({"name": "cluster-policies"});
    let error = flotilla_core::query::placement::envelope::unwrap(
        &flotilla_core::query::placement::SelectedResource {
            key: flotilla_core::model::ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourceEnvelope",
                "cluster-policies",
            ),
            api_version: "placement.kubernetes-fleet.io/v1beta1".into(),
            manifest: cluster_envelope.to_string(),
        },
    )
    .expect_err("a namespaced object in a cluster envelope");
    assert!(
        error
            .reason
            .contains("cannot be wrapped in a cluster resource envelope")
    );
}

#[test]
fn a_failed_object_from_an_envelope_is_named_in_failed_placements() {
    let mut hub = fleet(&[envelope_config_map(
        json!({"resourceQuota.yaml": QUOTA_YAML}),
    )]);
    let message = "Failed to apply the manifest (error: quota denied)";
    hub.fold(
        20,
        "agent/member-1",
        flotilla_core::Input::WorkReport(flotilla_core::WorkReport {
            cluster: "member-1".into(),
            placement: "crp".into(),
            namespace: None,
            resource_index: 0,
            applied: Some(false),
            available: None,
            trackable: true,
            message: message.into(),
            failed_manifests: vec![flotilla_core::ManifestFailure {
                group: String::new(),
                version: "v1".into(),
                kind: "ResourceQuota".into(),
                namespace: "app".into(),
                name: "mem-cpu-demo".into(),
                condition: flotilla_core::ManifestCondition::Applied,
                message: message.into(),
                reason: None,
            }],
            differences: flotilla_core::Differences::default(),
        }),
    );
    let crp = render_all(&hub.state)
        .into_iter()
        .find(|o| o["kind"] == "ClusterResourcePlacement")
        .expect("the placement");
    let failed = &crp["status"]["placementStatuses"][0]["failedPlacements"][0];
    assert_eq!(failed["kind"], "ResourceQuota");
    assert_eq!(failed["name"], "mem-cpu-demo");
    assert_eq!(failed["namespace"], "app");
    assert_eq!(failed["condition"]["reason"], "ManifestApplyFailed");
}
