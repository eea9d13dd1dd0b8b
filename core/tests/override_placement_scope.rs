//! Override placement references as KubeFleet scopes them (`PlacementRef.scope`,
//! `pkg/utils/overrider`): a ClusterResourceOverride refers to a ClusterResourcePlacement; a
//! ResourceOverride refers to a ClusterResourcePlacement by default (KubeFleet's `ro-1` example)
//! and to a ResourcePlacement in its own namespace with `scope: Namespaced`.

mod common;

use common::{Hub, namespace};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::overrides::render_for_cluster;
use serde_json::{Value, json};

fn crp() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "app"},
        "spec": {"resourceSelectors": [
            {"group": "", "version": "v1", "kind": "Namespace", "name": "team"}
        ]}
    })
}

fn rp() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourcePlacement",
        "metadata": {"name": "app", "namespace": "team"},
        "spec": {"resourceSelectors": [
            {"group": "", "version": "v1", "kind": "ConfigMap", "name": "settings"}
        ]}
    })
}

/// A ResourceOverride in `team` annotating the ConfigMap, referring to `placement`.
fn ro(name: &str, placement: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {
            "placement": placement,
            "resourceSelectors": [
                {"group": "", "version": "v1", "kind": "ConfigMap", "name": "settings"}
            ],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": []},
                "jsonPatchOverrides": [{
                    "op": "add", "path": "/metadata/annotations", "value": {"by": name}
                }]
            }]}
        }
    })
}

fn cro(placement: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": "cro"},
        "spec": {
            "placement": placement,
            "clusterResourceSelectors": [
                {"group": "", "version": "v1", "kind": "Namespace", "name": "team"}
            ],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": []},
                "jsonPatchOverrides": [{
                    "op": "add", "path": "/metadata/labels", "value": {"by": "cro"}
                }]
            }]}
        }
    })
}

fn hub() -> Hub {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&namespace("team"));
    hub.apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "team"},
        "data": {"k": "v"}
    }));
    hub.apply(&crp());
    hub.apply(&rp());
    hub
}

/// The override snapshots that apply to the placement's resources on member-1.
fn applicable(hub: &Hub, placement: &ObjectKey) -> (Vec<String>, Vec<(String, String)>) {
    let stored = &hub.state.placements()[placement];
    let resources = stored
        .latest_resources()
        .map(|s| s.resources.clone())
        .unwrap_or_default();
    let work = render_for_cluster(&hub.state, placement, &resources, "member-1").expect("renders");
    (work.cluster_resource_overrides, work.resource_overrides)
}

fn crp_key() -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, "ClusterResourcePlacement", "app")
}

fn rp_key() -> ObjectKey {
    ObjectKey::namespaced(PLACEMENT_GROUP, "ResourcePlacement", "team", "app")
}

fn stored(decisions: &[Decision]) {
    assert!(
        decisions.iter().all(|d| !d.is_rejection()),
        "rejected: {decisions:?}"
    );
}

#[test]
fn a_resource_override_without_scope_refers_to_the_cluster_resource_placement() {
    let mut hub = hub();
    stored(&hub.apply(&ro("ro-default", json!({"name": "app"}))));
    let expected = vec![("team".to_owned(), "ro-default-0".to_owned())];
    assert_eq!(applicable(&hub, &crp_key()).1, expected);
    assert!(
        applicable(&hub, &rp_key()).1.is_empty(),
        "not the same-named RP"
    );
}

#[test]
fn a_namespaced_reference_names_the_resource_placement_in_the_override_namespace() {
    let mut hub = hub();
    stored(&hub.apply(&ro("ro-rp", json!({"name": "app", "scope": "Namespaced"}))));
    assert!(applicable(&hub, &crp_key()).1.is_empty(), "not the CRP");
    let expected = vec![("team".to_owned(), "ro-rp-0".to_owned())];
    assert_eq!(applicable(&hub, &rp_key()).1, expected);
}

#[test]
fn an_unreferenced_override_applies_to_both_placements() {
    let mut hub = hub();
    let mut any = ro("ro-any", json!({"name": "x"}));
    any["spec"]
        .as_object_mut()
        .expect("an object")
        .remove("placement");
    stored(&hub.apply(&any));
    assert_eq!(applicable(&hub, &crp_key()).1.len(), 1);
    assert_eq!(applicable(&hub, &rp_key()).1.len(), 1);
}

#[test]
fn a_cluster_resource_override_refers_to_the_cluster_resource_placement_only() {
    let mut hub = hub();
    stored(&hub.apply(&cro(json!({"name": "app"}))));
    assert_eq!(applicable(&hub, &crp_key()).0, vec!["cro-0".to_owned()]);
    assert!(
        applicable(&hub, &rp_key()).0.is_empty(),
        "not the same-named RP"
    );
}

#[test]
fn a_cluster_resource_override_cannot_refer_to_a_resource_placement() {
    let mut hub = hub();
    let decisions = hub.apply(&cro(json!({"name": "app", "scope": "Namespaced"})));
    let Some(Decision::Rejected { code, message }) = decisions.first() else {
        panic!("expected a rejection, got {decisions:?}");
    };
    assert_eq!(*code, RejectCode::InvalidObject);
    assert!(message.contains("spec.placement.scope"), "{message}");
}

#[test]
fn an_unknown_scope_is_refused() {
    let mut hub = hub();
    let decisions = hub.apply(&ro("ro-bad", json!({"name": "app", "scope": "Namespace"})));
    assert!(
        matches!(
            decisions.first(),
            Some(Decision::Rejected {
                code: RejectCode::InvalidObject,
                ..
            })
        ),
        "{decisions:?}"
    );
}

#[test]
fn the_scope_is_part_of_the_immutable_reference() {
    let mut hub = hub();
    stored(&hub.apply(&ro("ro-1", json!({"name": "app"}))));
    let decisions = hub.apply(&ro("ro-1", json!({"name": "app", "scope": "Namespaced"})));
    assert!(
        matches!(
            decisions.first(),
            Some(Decision::Rejected {
                code: RejectCode::ImmutableField,
                ..
            })
        ),
        "{decisions:?}"
    );
}
