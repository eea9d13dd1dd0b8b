//! An override change rolls out like a resource change (KubeFleet's override docs, "When To Trigger
//! Rollout"): bindings record the override snapshots their work was rendered with, and a new
//! or changed override makes them out of date, so the rollout moves them within its budget. An
//! override that fails on a cluster leaves that cluster on the work it has and fails its
//! binding, which the next rollout then always takes (KubeFleet's `HasBindingFailed`).

mod common;

use common::{Hub, crp, member, namespace};
use flotilla_core::query::placement::Work;
use flotilla_core::query::rollout::readiness::Readiness;
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

/// A ClusterResourceOverride of namespace `test-ns` with one JSON patch, on every cluster.
fn cro_patching(name: &str, patch: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": name},
        "spec": {
            "clusterResourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test-ns"}],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
                "jsonPatchOverrides": [patch]
            }]}
        }
    })
}

fn failure_of(hub: &Hub, cluster: &str) -> Option<(String, Option<Work>)> {
    let binding = hub.placement("crp-1").bindings.get(cluster)?;
    let failure = binding.override_failure?;
    Some((failure.message?, failure.kept))
}

fn readiness_of(hub: &Hub, cluster: &str) -> Readiness {
    let binding = hub.placement("crp-1").bindings.get(cluster).expect("bound");
    flotilla_core::query::rollout::readiness::judge(
        &binding,
        binding.report.as_ref(),
        flotilla_core::query::rollout::readiness::ApplyMode::Apply,
        chrono::Duration::seconds(60),
        hub.now,
    )
}

#[test]
fn a_failing_override_keeps_the_work_fails_the_binding_and_its_removal_rolls_on() {
    let mut hub = Hub::new();
    let clusters = ["member-1", "member-2"];
    for name in clusters {
        hub.apply(&member(name, json!({"env": "prod"}), json!([])));
        hub.beat(name);
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&crp("crp-1", json!({"placementType": "PickAll"})));
    report_all(&mut hub, &clusters);
    // The namespace has no label `team`: replacing it fails on every cluster.
    let bad = json!({"op": "replace", "path": "/metadata/labels/team", "value": "a"});
    hub.apply(&cro_patching("bad-cro", bad));
    let (message, kept) = failure_of(&hub, "member-1").expect("member-1 moved and failed");
    assert!(message.contains("bad-cro"), "{message}");
    let kept = kept.expect("the cluster keeps its work");
    assert_eq!(kept.resource_index, 0);
    assert!(
        kept.override_snapshots.0.is_empty(),
        "the work before the override"
    );
    assert_eq!(readiness_of(&hub, "member-1"), Readiness::Failed);
    // One of two may be unavailable: the failed cluster holds the budget.
    assert!(failure_of(&hub, "member-2").is_none());
    assert!(
        (hub.placement("crp-1").bindings.get("member-2"))
            .is_some_and(|b| b.override_snapshots.0.is_empty())
    );
    // The override deleted, the failed binding moves at once, whatever the budget.
    hub.delete("ClusterResourceOverride", "bad-cro");
    let binding = hub
        .placement("crp-1")
        .bindings
        .get("member-1")
        .expect("bound");
    assert!(
        binding.override_failure.is_none(),
        "{:?}",
        binding.override_failure
    );
    assert!(binding.override_snapshots.0.is_empty());
    // Bound to the very work its cluster kept: the member's report on it counts again.
    assert_eq!(readiness_of(&hub, "member-1"), Readiness::Ready);
    // A new resource snapshot reaches every cluster again.
    report_all(&mut hub, &clusters);
    hub.apply(&json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "test-ns", "labels": {"team": "a"}}}));
    for _ in 0..clusters.len() {
        report_all(&mut hub, &clusters);
    }
    assert!(
        (hub.placement("crp-1").bindings.values()).all(|b| b.resource_index == Some(1)),
        "every cluster on resource snapshot 1"
    );
}

#[test]
fn a_failed_binding_is_moved_past_the_budget_when_the_override_is_fixed() {
    let mut hub = Hub::new();
    let clusters = ["member-1", "member-2", "member-3", "member-4"];
    for name in clusters {
        hub.apply(&member(name, json!({"env": "prod"}), json!([])));
        hub.beat(name);
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&crp("crp-1", json!({"placementType": "PickAll"})));
    report_all(&mut hub, &clusters);
    let bad = json!({"op": "replace", "path": "/metadata/labels/team", "value": "a"});
    hub.apply(&cro_patching("cro", bad));
    assert!(failure_of(&hub, "member-1").is_some());
    // The budget (1 of 4) is spent on the failed cluster; fixing the override moves it anyway.
    let good = json!({"op": "add", "path": "/metadata/labels", "value": {"team": "a"}});
    hub.apply(&cro_patching("cro", good));
    let binding = hub
        .placement("crp-1")
        .bindings
        .get("member-1")
        .expect("bound");
    assert!(binding.override_failure.is_none());
    assert_eq!(binding.override_snapshots.0.as_slice(), ["cro-1"]);
    for _ in 0..clusters.len() {
        report_all(&mut hub, &clusters);
    }
    assert!(
        (hub.placement("crp-1").bindings.values()).all(|b| b.override_snapshots.0 == ["cro-1"]),
        "every cluster ends on the fixed override"
    );
}
