//! An override change rolls out like a resource change (seed 002 section 9, "When To Trigger
//! Rollout"): bindings record the override snapshots their work was rendered with, and a new
//! or changed override makes them out of date, so the rollout moves them within its budget.

mod common;

use common::{Hub, crp, member, namespace};
use flotilla_core::{Input, WorkReport};
use serde_json::json;

fn report_all(hub: &mut Hub, clusters: &[&str]) {
    for cluster in clusters {
        let index = hub
            .placement("crp-1")
            .bindings
            .get(cluster)
            .and_then(|b| b.resource_index);
        let Some(resource_index) = index else {
            continue;
        };
        hub.send(Input::WorkReport(WorkReport::available(
            *cluster,
            "crp-1",
            resource_index,
        )));
    }
}

#[test]
fn a_new_override_rolls_out_within_the_budget() {
    let mut hub = Hub::new();
    let clusters = ["member-1", "member-2", "member-3", "member-4"];
    for name in clusters {
        hub.apply(&member(name, json!({"env": "prod"}), json!([])));
        hub.beat(name);
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&crp("crp-1", json!({"placementType": "PickAll"})));
    report_all(&mut hub, &clusters);
    assert!(
        hub.placement("crp-1")
            .bindings
            .values()
            .all(|b| b.override_snapshots.0.is_empty())
    );
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": "cro-1"},
        "spec": {
            "clusterResourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test-ns"}],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
                "jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels", "value": {"cluster": "${MEMBER-CLUSTER-NAME}"}}]
            }]}
        }
    }));
    // 25% of 4 → 1 may be unavailable: one cluster moves to the override first.
    let moved: Vec<String> = hub
        .placement("crp-1")
        .bindings
        .values()
        .filter(|b| b.override_snapshots.0 == ["cro-1-0"])
        .map(|b| b.cluster.to_string())
        .collect();
    assert_eq!(moved, ["member-1"]);
    for _ in 0..clusters.len() {
        report_all(&mut hub, &clusters);
    }
    assert!(
        hub.placement("crp-1")
            .bindings
            .values()
            .all(|b| b.override_snapshots.0 == ["cro-1-0"]),
        "every cluster ends on the override"
    );
}
