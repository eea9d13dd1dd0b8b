//! A ResourcePlacement's resources reach only clusters where their namespace exists — built in,
//! placed there by a ClusterResourcePlacement, or reported by the agent as a heartbeat property —
//! otherwise its work is recorded as failed to apply with KubeFleet's reason and the API
//! server's message, whatever the member said.

mod common;

use common::{Hub, namespace};
use flotilla_core::decision::Decision;
use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::coordinate::namespaces::{NAMESPACE_PROPERTY_PREFIX, namespace_exists};
use flotilla_core::state::WorkStatus;
use flotilla_core::{Input, ManifestCondition, WorkReport};
use serde_json::json;

/// Two joined clusters, namespace `ns` with a ConfigMap, and a PickAll RP in `ns` selecting it.
fn fleet(ns: &str) -> Hub {
    let mut hub = Hub::new();
    for name in ["c1", "c2"] {
        hub.join(name, json!({}), json!([]));
    }
    hub.apply(&namespace(ns));
    hub.apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": ns}, "data": {"k": "v"}
    }));
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourcePlacement",
        "metadata": {"name": "rp", "namespace": ns},
        "spec": {"resourceSelectors": [
            {"group": "", "version": "v1", "kind": "ConfigMap", "name": "settings"}
        ]}
    }));
    hub
}

fn rp_key(ns: &str) -> ObjectKey {
    ObjectKey::namespaced(PLACEMENT_GROUP, "ResourcePlacement", ns, "rp")
}

/// The member says it applied the RP's work on `cluster`; what the hub recorded.
fn report_applied(hub: &mut Hub, ns: &str, cluster: &str) -> WorkStatus {
    let key = rp_key(ns);
    let resource_index = hub.state.placements()[&key]
        .bindings
        .get(cluster)
        .expect("a binding")
        .resource_index
        .expect("bound");
    let decisions = hub.send(Input::WorkReport(WorkReport {
        namespace: Some(ns.into()),
        ..WorkReport::available(cluster, "rp", resource_index)
    }));
    assert!(
        decisions
            .iter()
            .any(|d| matches!(d, Decision::WorkReported { .. })),
        "{decisions:?}"
    );
    hub.state.placements()[&key]
        .bindings
        .get(cluster)
        .expect("a binding")
        .report
        .clone()
        .expect("recorded")
}

#[test]
fn without_its_namespace_the_work_fails_with_kubefleets_reason() {
    let mut hub = fleet("team");
    assert!(!namespace_exists(&hub.state, "c1", "team"));
    let status = report_applied(&mut hub, "team", "c1");
    assert_eq!(status.applied, Some(false));
    assert_eq!(
        status.message(),
        "Failed to apply the manifest (error: namespaces \"team\" not found)"
    );
    let failed = &status.failed_manifests();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (failed[0].kind.as_str(), failed[0].name.as_str()),
        ("ConfigMap", "settings")
    );
    assert_eq!(failed[0].condition, ManifestCondition::Applied);
}

#[test]
fn a_built_in_namespace_always_exists() {
    let mut hub = fleet("default");
    let status = report_applied(&mut hub, "default", "c1");
    assert_eq!(status.applied, Some(true));
}

#[test]
fn a_namespace_the_agent_reports_exists_on_that_cluster_only() {
    let mut hub = fleet("team");
    let property = format!("{NAMESPACE_PROPERTY_PREFIX}team");
    hub.beat_with("c2", &[(property.as_str(), "1")]);
    assert!(namespace_exists(&hub.state, "c2", "team"));
    assert!(!namespace_exists(&hub.state, "c1", "team"));
    assert_eq!(report_applied(&mut hub, "team", "c2").applied, Some(true));
    assert_eq!(report_applied(&mut hub, "team", "c1").applied, Some(false));
}

#[test]
fn a_namespace_a_cluster_resource_placement_carries_there_exists() {
    let mut hub = fleet("team");
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "team-ns"},
        "spec": {
            "resourceSelectors": [
                {"group": "", "version": "v1", "kind": "Namespace", "name": "team"}
            ],
            "policy": {"placementType": "PickFixed", "clusterNames": ["c1"]}
        }
    }));
    assert!(namespace_exists(&hub.state, "c1", "team"));
    assert!(!namespace_exists(&hub.state, "c2", "team"));
    assert_eq!(report_applied(&mut hub, "team", "c1").applied, Some(true));
    assert_eq!(report_applied(&mut hub, "team", "c2").applied, Some(false));
}
